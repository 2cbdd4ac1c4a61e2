internal import CMosquitto

/// Process-wide libmosquitto set-up. This module is the only importer of libmosquitto.
enum MosquittoLibrary {
    /// mosquitto.h: "libmosquitto provides thread safe operation, with the exception of
    /// <mosquitto_lib_init> which is not thread safe." A `static let` runs its initializer exactly once,
    /// under the runtime's once-lock, so every handle creation goes through here first. There is no
    /// matching mosquitto_lib_cleanup: the library stays initialised for the life of the process.
    private static let initResult: Int32 = mosquitto_lib_init()

    static func ensureInitialized() {
        _ = initResult
    }

    static func version() -> (major: Int32, minor: Int32, revision: Int32) {
        var major: Int32 = 0
        var minor: Int32 = 0
        var revision: Int32 = 0
        _ = mosquitto_lib_version(&major, &minor, &revision)
        return (major, minor, revision)
    }

    /// libmosquitto's sentence for one of its error numbers (`MOSQ_ERR_*`), without its final period so it
    /// reads inside our sentences the way strerror's text does.
    static func errorText(_ code: Int32) -> String {
        var text = String(cString: mosquitto_strerror(code))
        if text.hasSuffix(".") { text.removeLast() }
        return text
    }

    /// libmosquitto's sentence for an MQTT 5 reason code.
    static func reasonText(_ code: Int32) -> String {
        String(cString: mosquitto_reason_string(code))
    }
}
