internal import CLibIIO

#if canImport(Glibc)
import Glibc
#endif

/// A channel's `_raw` or `_input` sysfs file kept open while a device is polled: one `pread` per reading.
///
/// libiio's local backend opens, reads and closes the file for every `iio_channel_attr_read_*` (about five
/// system calls and a `FILE` allocation); a magnetometer polled at 100 Hz on three axes paid that 300 times a
/// second. Re-reading an open sysfs attribute from offset 0 runs the driver's `show` again (kernfs
/// `seq_read_iter` restarts at position 0), so the value is as fresh as libiio's, and an unbound device's file
/// fails with ENODEV as libiio's open would. Only for `local:` contexts, whose files are under
/// /sys/bus/iio/devices (libiio's local backend reads the same path).
final class PolledAttribute {
    private let fd: Int32

    /// Nil when the file cannot be opened: the caller falls back to libiio.
    init?(deviceID: String, channel: OpaquePointer, attribute: String) {
        guard let name = iio_channel_attr_get_filename(channel, attribute) else { return nil }
        let path = "/sys/bus/iio/devices/\(deviceID)/\(String(cString: name))"
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        self.fd = fd
    }

    deinit {
        close(fd)
    }

    /// The attribute as an integer (`_raw`); status 0, or a negative errno as libiio's readers return.
    func readInteger() -> (status: Int32, value: Int64) {
        read { text, end in strtoll(text, &end, 0) }
    }

    /// The attribute as a decimal (`_input`, already in the kernel's unit).
    func readDouble() -> (status: Int32, value: Double) {
        read { text, end in strtod(text, &end) }
    }

    private func read<T: Numeric>(
        _ parse: (UnsafePointer<CChar>, inout UnsafeMutablePointer<CChar>?) -> T
    ) -> (status: Int32, value: T) {
        withUnsafeTemporaryAllocation(of: CChar.self, capacity: 64) { buffer in
            let text = buffer.baseAddress!
            let n = pread(fd, text, 63, 0)
            guard n > 0 else { return (n == 0 ? -EINVAL : -errno, 0) }
            text[n] = 0
            var end: UnsafeMutablePointer<CChar>?
            errno = 0
            let value = parse(text, &end)
            guard errno == 0, let end, end != text else { return (-EINVAL, 0) }
            return (0, value)
        }
    }
}
