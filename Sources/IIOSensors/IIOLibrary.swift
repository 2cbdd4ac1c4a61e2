internal import CLibIIO

/// The only importer of libiio: version and error text.
enum IIOLibrary {
    static func version() -> String {
        var major: UInt32 = 0
        var minor: UInt32 = 0
        var tag = [CChar](repeating: 0, count: 8)
        iio_library_get_version(&major, &minor, &tag)
        return "\(major).\(minor)"
    }

    /// libiio's text for a (positive) errno code, e.g. "Connection timed out".
    static func describe(errno code: Int32) -> String {
        withUnsafeTemporaryAllocation(of: CChar.self, capacity: 256) { buffer in
            iio_strerror(abs(code), buffer.baseAddress, buffer.count)
            return String(cString: buffer.baseAddress!)
        }
    }
}
