import AgentPorts
internal import CMosquitto

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// libmosquitto's callbacks. They capture nothing: the context is the `MosquittoConnection` whose
/// `Unmanaged` pointer is the handle's userdata (retained by `MosquittoClient.connect`, released by the network
/// thread after its last library call). They run on the network thread, inside `mosquitto_loop`, and only
/// record state on the connection and yield into the event stream — they never block, lock or publish.
extension MosquittoConnection {
    static func installCallbacks(on mosq: OpaquePointer) {
        mosquitto_connect_v5_callback_set(mosq) { _, userdata, code, flags, properties in
            guard let connection = MosquittoConnection.from(userdata) else { return }
            connection.connackCode = code
            // 0x9C use another server, 0x9D server moved (MQTT 5 §3.2.2.2): the Server Reference (0x1C) says
            // where. libmosquitto hands CONNACK properties to this callback only — a DISCONNECT's are freed
            // before on_disconnect runs (lib/handle_disconnect.c), so there the agent cannot know the server.
            if code == 0x9C || code == 0x9D, let properties,
                let reference = MosquittoConnection.serverReference(in: properties)
            {
                connection.core.channel.yieldControl(.serverReference(reference))
            }
            if code == 0 {
                // Before the event is visible, so a consumer reacting to `.connected` can publish at once.
                connection.core.setPhase(.connected)
                // CONNACK flags bit 0: Session Present (MQTT 3.1.1 §3.2.2.2, MQTT 5 §3.2.2.1.1).
                connection.core.channel.yieldControl(.connected(sessionPresent: flags & 1 != 0))
            }
        }
        mosquitto_disconnect_v5_callback_set(mosq) { _, userdata, code, _ in
            guard let connection = MosquittoConnection.from(userdata) else { return }
            if connection.disconnectCode == nil { connection.disconnectCode = code }
            if connection.connackCode == 0 { connection.core.setPhase(.closing) }
        }
        mosquitto_publish_v5_callback_set(mosq) { _, userdata, messageID, reasonCode, _ in
            guard let connection = MosquittoConnection.from(userdata) else { return }
            // Settled (and handed to the acknowledgement handler, QoS > 0 only) after the loop call, outside
            // libmosquitto's locks and in one batch per loop turn.
            connection.completedMessageIDs.append(messageID)
            if reasonCode >= 0x80, connection.publishFailureCode == nil {
                connection.publishFailureCode = reasonCode
            }
        }
        mosquitto_subscribe_v5_callback_set(mosq) { _, userdata, messageID, count, granted, _ in
            guard let connection = MosquittoConnection.from(userdata), let granted else { return }
            // 0x80 (3.1.1) or a reason code from 0x80 up (MQTT 5): that filter was refused.
            let refused = (0..<Int(max(0, count))).filter { granted[$0] >= 0x80 }
            if !refused.isEmpty {
                connection.refusedSubscriptions.append(
                    (messageID, refused, UInt8(truncatingIfNeeded: granted[refused[0]]))
                )
            }
            connection.answeredSubscriptions.append(messageID)
        }
        mosquitto_message_v5_callback_set(mosq) { _, userdata, message, properties in
            guard let connection = MosquittoConnection.from(userdata), let message else { return }
            let channel = connection.core.channel
            let lent = message.pointee
            let payloadBytes = Int(max(0, lent.payloadlen))
            let topicBytes = lent.topic.map { strlen($0) } ?? 0
            // libmosquitto has read the whole packet already (it has no inbound limit of its own); what the agent
            // can still spare is the copy, and the queue's room. The packet holds at least the payload, the topic
            // and its 2-byte length and the 2-byte fixed header, so a message past the limit by this lower bound
            // is one the broker was asked never to send.
            if let limit = connection.options.maximumPacketSize, payloadBytes + topicBytes + 4 > limit {
                channel.countOversize(bytes: payloadBytes, topic: lent.topic)
                return
            }
            let extras = MosquittoConnection.requestProperties(properties)
            let bytes =
                payloadBytes + topicBytes + (extras.responseTopic?.utf8.count ?? 0)
                + (extras.correlationData?.count ?? 0)
            guard channel.reserveData(bytes: bytes, topic: lent.topic) else { return }
            channel.yieldReservedData(
                .message(MosquittoConnection.inboundMessage(lent, extras: extras)),
                reserved: bytes
            )
        }
    }

    fileprivate static func from(_ userdata: UnsafeMutableRawPointer?) -> MosquittoConnection? {
        guard let userdata else { return nil }
        return Unmanaged<MosquittoConnection>.fromOpaque(userdata).takeUnretainedValue()
    }

    /// The Server Reference property of `properties`, or nil when there is none.
    fileprivate static func serverReference(in properties: OpaquePointer) -> String? {
        // mosquitto.h, mosquitto_property_read_string: "On success, value must be free()'d by the application."
        var pointer: UnsafeMutablePointer<CChar>?
        guard
            mosquitto_property_read_string(properties, Int32(MQTT_PROP_SERVER_REFERENCE.rawValue), &pointer, false)
                != nil, let pointer
        else { return nil }
        defer { free(pointer) }
        return String(cString: pointer)
    }

    /// The MQTT 5 request/response properties of an inbound message, copied (none on MQTT 3.1.1).
    fileprivate struct RequestProperties {
        var responseTopic: String?
        var correlationData: [UInt8]?
    }

    fileprivate static func requestProperties(_ properties: OpaquePointer?) -> RequestProperties {
        var extras = RequestProperties()
        guard let properties else { return extras }
        // mosquitto.h, mosquitto_property_read_string/_binary: "On success, value must be free()'d by the
        // application."
        var topicPointer: UnsafeMutablePointer<CChar>?
        if mosquitto_property_read_string(
            properties,
            Int32(MQTT_PROP_RESPONSE_TOPIC.rawValue),
            &topicPointer,
            false
        ) != nil, let topicPointer {
            extras.responseTopic = String(cString: topicPointer)
            free(topicPointer)
        }
        var dataPointer: UnsafeMutableRawPointer?
        var dataLength: UInt16 = 0
        if mosquitto_property_read_binary(
            properties,
            Int32(MQTT_PROP_CORRELATION_DATA.rawValue),
            &dataPointer,
            &dataLength,
            false
        ) != nil {
            if let dataPointer {
                extras.correlationData = [UInt8](UnsafeRawBufferPointer(start: dataPointer, count: Int(dataLength)))
                free(dataPointer)
            } else {
                extras.correlationData = []
            }
        }
        return extras
    }

    /// Copies what libmosquitto lends for the callback's duration into an owned value.
    fileprivate static func inboundMessage(_ message: mosquitto_message, extras: RequestProperties) -> InboundMessage {
        let topic = message.topic.map { String(cString: $0) } ?? ""
        let payload: [UInt8]
        if let bytes = message.payload, message.payloadlen > 0 {
            payload = [UInt8](UnsafeRawBufferPointer(start: bytes, count: Int(message.payloadlen)))
        } else {
            payload = []
        }
        return InboundMessage(
            topic: topic,
            payload: payload,
            qos: Int(message.qos),
            retain: message.retain,
            responseTopic: extras.responseTopic,
            correlationData: extras.correlationData
        )
    }
}
