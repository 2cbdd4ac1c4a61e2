internal import CLibIIO

#if canImport(Glibc)
import Glibc
#endif

/// One libiio context. libiio's rule: the context owns its devices, channels and their strings; they stay
/// valid until `iio_context_destroy`, which this class calls once in `deinit`. A context is not shared
/// between threads here: discovery and every device's acquisition thread each open their own.
final class IIOContext {
    let pointer: OpaquePointer
    let uri: String

    init(uri: String) throws(IIOError) {
        errno = 0
        guard let ctx = iio_create_context_from_uri(uri) else {
            let code = errno == 0 ? ENODEV : errno
            throw IIOError(
                operation: "open IIO context \"\(uri)\"",
                errno: code,
                fix: IIOContext.fixHint(uri: uri)
            )
        }
        pointer = ctx
        self.uri = uri
    }

    deinit {
        iio_context_destroy(pointer)
    }

    static func fixHint(uri: String) -> String {
        if uri.hasPrefix("ip:") {
            return "check source.iio.uri and that iiod runs on that host (port 30431 unless given as ip:HOST:PORT)"
        }
        if uri.hasPrefix("local:") {
            return "check that the IIO drivers are loaded (ls /sys/bus/iio/devices) and that the agent may read them"
        }
        return "check source.iio.uri (local:, ip:HOST, usb:, serial:PORT,BAUD)"
    }

    /// Bounds every blocking buffer operation (refill) on this context.
    func setTimeout(milliseconds: UInt32) {
        _ = iio_context_set_timeout(pointer, milliseconds)
    }

    var devices: [OpaquePointer] {
        (0..<iio_context_get_devices_count(pointer)).compactMap { iio_context_get_device(pointer, $0) }
    }
}

/// Thin reads of libiio attributes; every read goes through a 1 KiB stack buffer (sysfs values are short).
enum IIOAttribute {
    static func string(_ body: (UnsafeMutablePointer<CChar>, Int) -> Int) -> String? {
        withUnsafeTemporaryAllocation(of: CChar.self, capacity: 1024) { buffer in
            let n = body(buffer.baseAddress!, buffer.count)
            guard n > 0 else { return nil }
            buffer[min(n, buffer.count - 1)] = 0
            let text = String(cString: buffer.baseAddress!)
            return String(Substring(text).trimmingWhitespace())
        }
    }

    static func device(_ dev: OpaquePointer, _ name: String) -> String? {
        guard iio_device_find_attr(dev, name) != nil else { return nil }
        return string { iio_device_attr_read(dev, name, $0, $1) }
    }

    static func channel(_ chn: OpaquePointer, _ name: String) -> String? {
        guard iio_channel_find_attr(chn, name) != nil else { return nil }
        return string { iio_channel_attr_read(chn, name, $0, $1) }
    }

    static func bufferAttribute(_ dev: OpaquePointer, _ name: String) -> Bool {
        iio_device_find_buffer_attr(dev, name) != nil
    }

    static func double(_ text: String?) -> Double? {
        guard let text, let value = Double(text) else { return nil }
        return value
    }
}

/// What libiio says about one channel, read straight from its handle.
struct IIOChannelHandle {
    let pointer: OpaquePointer
    let id: String
    let quantity: IIOQuantity
    /// 0, 1, 2 for the x, y, z modifiers; nil for scalar channels.
    let axis: Int?
    let isScanElement: Bool

    init?(_ chn: OpaquePointer) {
        guard !iio_channel_is_output(chn), let quantity = IIOQuantity(iio_channel_get_type(chn)) else {
            return nil
        }
        pointer = chn
        id = String(cString: iio_channel_get_id(chn))
        self.quantity = quantity
        switch iio_channel_get_modifier(chn) {
        case IIO_MOD_X: axis = 0
        case IIO_MOD_Y: axis = 1
        case IIO_MOD_Z: axis = 2
        default: axis = nil
        }
        isScanElement = iio_channel_is_scan_element(chn)
        if quantity.isVector && axis == nil { return nil }
    }

    var hasRaw: Bool { iio_channel_find_attr(pointer, "raw") != nil }
    var hasProcessed: Bool { iio_channel_find_attr(pointer, "input") != nil }

    /// The scan type as the kernel writes it in `scan_elements/*_type`, e.g. `le:s16/16>>0`.
    var scanFormat: String? {
        guard isScanElement, let format = iio_channel_get_data_format(pointer)?.pointee else { return nil }
        let repeatText = format.repeat > 1 ? "X\(format.repeat)" : ""
        return "\(format.is_be ? "be" : "le"):\(format.is_signed ? "s" : "u")\(format.bits)/\(format.length)"
            + "\(repeatText)>>\(format.shift)"
    }
}

extension OpaquePointer {
    /// The device's id (`iio:device0`) and name (`bmi160`, or the id when the driver gives none).
    var iioDeviceID: String { String(cString: iio_device_get_id(self)) }
    var iioDeviceName: String {
        if let name = iio_device_get_name(self) { return String(cString: name) }
        return iioDeviceID
    }

    /// Whether the device takes a trigger (has `trigger/current_trigger`), and the one set now, if any.
    /// libiio 0.24's local backend answers EIO for the kernel's empty `current_trigger` (0 bytes while none is
    /// set, as on a bmi160 or ak8975 whose interrupt line is not wired, which registers no trigger at all):
    /// that means "takes one, none set", not an error. A device without the attribute gives ENOENT.
    var iioTrigger: (accepts: Bool, current: OpaquePointer?) {
        var current: OpaquePointer?
        let rc = iio_device_get_trigger(self, &current)
        if rc == 0 { return (true, current) }
        return (rc == -EIO, nil)
    }

    var iioChannels: [IIOChannelHandle] {
        (0..<iio_device_get_channels_count(self)).compactMap { index in
            iio_device_get_channel(self, index).flatMap(IIOChannelHandle.init)
        }
    }
}
