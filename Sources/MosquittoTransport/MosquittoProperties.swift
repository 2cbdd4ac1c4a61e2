import AgentPorts
internal import CMosquitto

/// Owns one MQTT 5 property list (`mosquitto_property *`), built for a single CONNECT or PUBLISH.
///
/// mosquitto.h, mosquitto_property_free_all: "Free all properties from a list of properties. Frees the list
/// and sets *properties to NULL." The list starts empty (NULL), grows with each `add`, and is freed once in
/// `deinit`. libmosquitto copies what it keeps (mosquitto_publish_v5 copies properties into the queued
/// message), so the list only has to outlive the call it is passed to.
final class MosquittoProperties {
    private(set) var list: OpaquePointer?

    init() {}

    deinit {
        mosquitto_property_free_all(&list)
    }

    func addInt32(_ identifier: mqtt5_property, _ value: UInt32, operation: String) throws(BrokerError) {
        let rc = mosquitto_property_add_int32(&list, Int32(identifier.rawValue), value)
        try Self.check(rc, operation: operation)
    }

    func addBinary(_ identifier: mqtt5_property, _ bytes: [UInt8], operation: String) throws(BrokerError) {
        guard bytes.count <= Int(UInt16.max) else {
            throw BrokerError(
                operation: operation,
                code: Int(MosquittoError.invalid),
                message: "binary property of \(bytes.count) bytes exceeds MQTT's 65535-byte limit"
            )
        }
        let rc = bytes.withUnsafeBytes { raw in
            mosquitto_property_add_binary(&list, Int32(identifier.rawValue), raw.baseAddress, UInt16(raw.count))
        }
        try Self.check(rc, operation: operation)
    }

    func addString(_ identifier: mqtt5_property, _ value: String, operation: String) throws(BrokerError) {
        let rc = mosquitto_property_add_string(&list, Int32(identifier.rawValue), value)
        try Self.check(rc, operation: operation)
    }

    /// The CONNECT properties the client sets, as the list holds them (nil when absent).
    var maximumPacketSize: UInt32? { int32(MQTT_PROP_MAXIMUM_PACKET_SIZE) }
    var sessionExpiryInterval: UInt32? { int32(MQTT_PROP_SESSION_EXPIRY_INTERVAL) }

    /// The value of a 4-byte integer property in the list, or nil without one.
    private func int32(_ identifier: mqtt5_property) -> UInt32? {
        var value: UInt32 = 0
        guard mosquitto_property_read_int32(list, Int32(identifier.rawValue), &value, false) != nil else { return nil }
        return value
    }

    private static func check(_ rc: Int32, operation: String) throws(BrokerError) {
        guard rc == MosquittoError.success else {
            throw BrokerError(operation: operation, code: Int(rc), message: MosquittoLibrary.errorText(rc))
        }
    }
}
