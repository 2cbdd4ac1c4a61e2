import CMosquitto

/// The only importer of libmosquitto.
enum MosquittoLibrary {
    static func version() -> (major: Int32, minor: Int32, revision: Int32) {
        var major: Int32 = 0, minor: Int32 = 0, revision: Int32 = 0
        _ = mosquitto_lib_version(&major, &minor, &revision)
        return (major, minor, revision)
    }
}
