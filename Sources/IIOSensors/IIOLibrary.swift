import CLibIIO

/// The only importer of libiio.
enum IIOLibrary {
    static func version() -> String {
        var major: UInt32 = 0, minor: UInt32 = 0
        var tag = [CChar](repeating: 0, count: 8)
        iio_library_get_version(&major, &minor, &tag)
        return "\(major).\(minor)"
    }
}
