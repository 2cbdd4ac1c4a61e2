import AgentPorts
import CFuzzerDriver
import Foundation

@testable import IIOSensors

// IIO scan records as the buffered acquisition decodes them: each channel's scan type (what the kernel writes in
// scan_elements/*_type: endianness, sign, bits, storage, repeat, shift) decides whether the channel is used
// and how many bytes `iio_channel_convert` reads and writes; then every element of every record is converted,
// clip-checked and scaled. libiio builds the channels from an XML context (the same parser the `xml:` URI
// uses) so no kernel is needed. The sysfs texts the discovery parses (sampling_frequency_available,
// mount_matrix) are fed the record bytes as well.
//
// Input: 3 bytes per channel (accel x, y, z, anglvel x, magn x, pressure, temp, timestamp) — flags (bit 0 big
// endian, bit 1 signed, bits 2–4 storage bits from {8, 16, 32, 64, 24, 0, 48, 128}, bits 5–6 repeat), bits,
// shift — then the records.
let channels: [(id: String, role: ScanSlot.Role)] = [
    ("accel_x", .acceleration(0)), ("accel_y", .acceleration(1)), ("accel_z", .acceleration(2)),
    ("anglvel_x", .angularVelocity(0)), ("magn_x", .magneticField(0)), ("pressure", .pressure),
    ("temp", .temperature), ("timestamp", .timestamp),
]
let file: String = {
    let base = FileManager.default.fileExists(atPath: "/dev/shm") ? "/dev/shm" : NSTemporaryDirectory()
    return "\(base)/motion-fuzz-iio-\(getpid()).xml"
}()
nonisolated(unsafe) let scratch = UnsafeMutableRawPointer.allocate(byteCount: ScanSlot.scratchBytes, alignment: 8)
let storageBits: [UInt32] = [8, 16, 32, 64, 24, 0, 48, 128]

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzIIOScan(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    let spec = 3 * channels.count
    guard count >= spec else { return 0 }
    let raw = UnsafeRawBufferPointer(start: start, count: count)
    var xml =
        "<?xml version=\"1.0\" encoding=\"utf-8\"?><context name=\"xml\"><device id=\"iio:device0\" name=\"fuzz\">"
    var elementBytes: [Int] = []
    for (index, channel) in channels.enumerated() {
        let flags = raw[3 * index]
        let length = storageBits[Int(flags >> 2) & 7]
        let repeatCount = UInt32(flags >> 5) & 3
        let bits = UInt32(raw[3 * index + 1]) % 129
        let shift = UInt32(raw[3 * index + 2]) % 64
        let format =
            "\(flags & 1 != 0 ? "be" : "le"):\(flags & 2 != 0 ? "s" : "u")\(bits)/\(length)"
            + (repeatCount > 1 ? "X\(repeatCount)" : "") + "&gt;&gt;\(shift)"
        xml += "<channel id=\"\(channel.id)\" type=\"input\"><scan-element index=\"\(index)\" format=\"\(format)\"/>"
        xml += "<attribute name=\"raw\" filename=\"in_\(channel.id)_raw\"/></channel>"
        elementBytes.append(Int(length / 8) * Int(max(repeatCount, 1)))
    }
    xml += "</device></context>"
    guard FileManager.default.createFile(atPath: file, contents: Data(xml.utf8)) else {
        fatalError("cannot write \(file): the fuzzer needs a writable temporary directory")
    }
    let records = Array(raw[spec...])
    if let text = String(validating: records, as: UTF8.self) {
        if let rates = SupportedRates(sysfs: text) { _ = rates.lowest(atLeast: 100) }
        if let matrix = MountMatrix(parsing: text) { _ = matrix.description }
    }
    guard let context = try? IIOContext(uri: "xml:" + file), let device = context.devices.first else { return 0 }
    var slots: [(ScanSlot, offset: Int)] = []
    var step = 0
    for handle in device.iioChannels {
        guard let index = channels.firstIndex(where: { $0.id == handle.id }),
            let slot = ScanSlot(handle: handle, role: channels[index].role, forBuffer: true)
        else { continue }
        // The kernel aligns each element to its own size within the scan (iio_compute_scan_bytes).
        let size = max(elementBytes[index], 1)
        step = (step + size - 1) / size * size
        slots.append((slot, step))
        step += size
    }
    guard step > 0, !slots.isEmpty else { return 0 }
    records.withUnsafeBytes { buffer in
        var offset = 0
        while offset + step <= buffer.count {
            for (slot, at) in slots {
                let count = slot.raw(at: buffer.baseAddress! + offset + at, scratch: scratch)
                if slot.role != .timestamp {
                    let saturated = slot.rawLimits.map { count == $0.lowerBound || count == $0.upperBound } ?? false
                    _ = (slot.value(raw: count), saturated)
                }
            }
            offset += step
        }
    }
    return 0
}

/// The entry point SwiftPM links as `main` (`<module>_main`): libFuzzer's driver, with the arguments libFuzzer
/// documents (`-max_total_time=`, corpus directories, …).
@_cdecl("FuzzIIOScan_main")
public func fuzzerMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> CInt {
    var argc = argc
    var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = argv
    return LLVMFuzzerRunDriver(&argc, &argv) { data, size in
        fuzzIIOScan(UnsafeRawPointer(data) ?? UnsafeRawPointer(bitPattern: 1)!, size)
    }
}
