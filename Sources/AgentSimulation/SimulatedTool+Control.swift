import AgentControl
import AgentPorts
import Foundation
import MemoryBroker
import MotionWire

/// What the control and desired-state scenarios do with a tool beyond `command`: publish raw bytes (an envelope, a
/// captured message, junk) with or without an MQTT 5 response topic, and read what arrived as JSON.
extension SimulatedTool {
    /// Publishes `payload` (QoS 1, not retained) as an MQTT 5 request — with `responseTopic` and `correlationData`,
    /// which an MQTT 3.1.1 connection leaves out — and lets the world take it.
    package func publishRequest(
        _ topic: String,
        _ payload: [UInt8],
        responseTopic: String,
        correlationData: [UInt8] = Array("scenario".utf8)
    ) throws {
        try client.publishRequest(
            topic: topic,
            payload: payload,
            responseTopic: responseTopic,
            correlationData: correlationData
        )
        world.run(for: 0.01)
    }

    /// Sends `json` (a command object) on `topic` as `motion-agent ctl` does — with its response topic
    /// (`motion-ctl/<client id>/reply`) and correlation data — and returns the replies that arrive within `timeout`
    /// simulated seconds (`expect` of them: one for a device, one per member for a group or the fleet), each
    /// decoded with the result shape of the command it answers, as `motion-agent ctl` reads them.
    ///
    /// Unlike `command(_:_:expect:timeout:)`, which decodes replies without a shape and so returns only those
    /// without a result (refusals), this returns every reply.
    package func send(_ topic: String, _ json: String, expect: Int = 1, timeout: Double = 10) throws -> [ControlReply] {
        try send(topic, Array(json.utf8), expect: expect, timeout: timeout)
    }

    /// `send` for any payload: a command object, a signed envelope (whose command is read inside it), or bytes
    /// that are neither (replies decoded without a result).
    package func send(
        _ topic: String,
        _ payload: [UInt8],
        expect: Int = 1,
        timeout: Double = 10
    ) throws
        -> [ControlReply]
    {
        let responseTopic = TopicScheme.operatorReply(clientID: clientID)
        // Unique per request, and the same in every run of the scenario.
        let correlation = Array("\(clientID)-\(messages.count)-\(world.now)".utf8)
        try client.subscribe([responseTopic + "/+"], qos: 1)
        world.run(for: 0.01)
        let before = messages.count
        try client.publishRequest(
            topic: topic,
            payload: payload,
            responseTopic: responseTopic,
            correlationData: correlation
        )
        func replies() -> [InboundMessage] {
            messages[before...].filter { $0.topic.hasPrefix(responseTopic + "/") && $0.correlationData == correlation }
        }
        _ = waitUntil(timeout: timeout) { replies().count >= expect }
        let shape = Self.commandName(payload).flatMap { ControlCommandDescriptor.named($0)?.result }
        return replies().compactMap { Self.reply($0.payload, shape: shape) }
    }

    /// A reply as `motion-agent ctl` reads it: with the result shape of its command, or without a result.
    package static func reply(_ payload: [UInt8], shape: ControlResult.Shape?) -> ControlReply? {
        if let shape, let reply = try? ControlReply.decode(payload, shape: shape) { return reply }
        return try? JSONDecoder().decode(ControlReply.self, from: Data(payload))
    }

    /// The `command` member of a command object, or of the object a signed envelope carries.
    static func commandName(_ payload: [UInt8]) -> String? {
        guard let object = try? JSONSerialization.jsonObject(with: Data(payload)) as? [String: Any] else {
            return nil
        }
        if let name = object["command"] as? String { return name }
        return ControlSigner.signedObject(payload)?.first { $0.key == "command" }?.value.string
    }

    /// The messages received on `topic`, each payload as a JSON object (empty when it is not one).
    package func json(on topic: String) -> [[String: Any]] {
        messages(on: topic).map(Self.json)
    }

    /// Replies on `topic` (a device's `{root}/control/reply`, or an operator's `motion-ctl/<client>/reply/<device>`)
    /// whose `id` is `id`, as JSON objects.
    package func replies(on topic: String, id: String) -> [[String: Any]] {
        json(on: topic).filter { $0["id"] as? String == id }
    }

    /// A payload as a JSON object (empty when it is not one).
    package static func json(_ message: InboundMessage) -> [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(message.payload)) as? [String: Any]) ?? [:]
    }
}
