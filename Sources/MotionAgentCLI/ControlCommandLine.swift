import AgentConfig
import AgentControl
import AgentPipeline
import AgentPorts
import AgentRuntime
import ArgumentParser
import Foundation
import Logging
import MosquittoTransport
import MotionWire

/// `motion-agent ctl`: publishes one command to a device, a group or the fleet and prints the replies.
struct ControlCommandLine: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ctl",
        abstract: "Send a control command to a device, a group or the whole fleet and print the replies.",
        discussion: """
            Arguments after the command are key=value pairs; numbers and true/false are
            sent as JSON numbers and booleans. Examples:
              motion-agent ctl --device imu-17 set-rate stream=gyroscope rate_hz=50
              motion-agent ctl --fleet status
              motion-agent ctl --group lab stop stream=magnetometer
              motion-agent ctl --signing-key operator.key --device imu-17 status
            Exit status: 0 when every reply was ok, 1 when one was not, 2 when no reply came in time.

            Commands:
            \(ControlCommandDescriptor.helpText)
            """
    )

    @OptionGroup var broker: BrokerOptions
    @Option(help: "The device to address (its device.id).") var device: String?
    @Option(help: "A group to address (its members list it under control.groups).") var group: String?
    @Flag(help: "Address every device.") var fleet = false
    @Option(help: "The fleet control topic.") var fleetTopic = TopicScheme.fleetControl
    @Option(help: "Seconds to wait for replies.") var timeout: Double = 5
    @Option(
        help:
            "Sign the command with this operator key (motion-agent keys generate; the devices' control.trusted_keys_file)."
    )
    var signingKey: String?
    @Argument(help: "The command: \(ControlCommandDescriptor.names.joined(separator: ", ")).") var command: String
    @Argument(help: "key=value arguments.") var arguments: [String] = []

    func validate() throws {
        let targets = [device != nil, group != nil, fleet].filter { $0 }.count
        guard targets == 1 else { throw ValidationError("address exactly one of --device ID, --group NAME or --fleet") }
        // The agent's own parser, so a mistake is caught here, with the same words the agent would reply.
        do {
            let object = try ControlCommandDescriptor.object(
                id: "check",
                command: command,
                pairs: arguments,
                timestamp: nil
            )
            if case .failure(let failure) = ControlRequest.parse(members: object) { throw failure }
        } catch let failure as ControlFailure {
            throw ValidationError(
                ControlCommandDescriptor.named(command) == nil
                    ? "\(failure.message)\n\(ControlCommandDescriptor.helpText)" : failure.message
            )
        }
    }

    func run() async throws {
        let id = UUID().uuidString.lowercased()
        let object = try ControlCommandDescriptor.object(
            id: id,
            command: command,
            pairs: arguments,
            timestamp: Date().timeIntervalSince1970
        )
        let topic: String
        if let device {
            topic = broker.topics(device: device).control
        } else if let group {
            topic = TopicScheme.groupControl(group)
        } else {
            topic = fleetTopic
        }
        var payload = StrictJSON.Value.object(object).encoded()
        if let signingKey {
            // Signed for this topic only, with the key's next counter: it cannot be moved or replayed.
            let operatorKey = try OperatorKeyFile(path: signingKey)
            let counter = try operatorKey.nextCounter()
            payload = SignedEnvelope.seal(
                [("target", .string(topic)), ("counter", .number(String(counter)))] + object,
                with: operatorKey.key
            )
        }

        let client = MosquittoClient(logger: Logger(label: "motion-agent.ctl"))
        let clientID = "motion-ctl-\(id.prefix(8))"
        try client.connect(try broker.connectOptions(clientID: clientID))
        try await awaitConnection(client, timeout: timeout)
        // MQTT 5: replies come to our own response topic, one level more per device (the device's id, which the
        // shipped ACL lets only that device write), with our correlation data. 3.1.1: on every device's reply
        // topic, matched by id. Either way the device is read from the topic, not from the reply's body.
        let responseTopic = TopicScheme.operatorReply(clientID: clientID)
        let replyFilter =
            broker.protocol == .v5 ? responseTopic + "/+" : TopicScheme.everyDeviceReply(template: broker.root)
        try client.subscribe([replyFilter], qos: 1)
        try await Task.sleep(for: .milliseconds(100))
        if broker.protocol == .v5 {
            try client.publishRequest(
                topic: topic,
                payload: Array(payload),
                responseTopic: responseTopic,
                correlationData: Array(id.utf8)
            )
        } else {
            try payload.withUnsafeBytes { _ = try client.publish(topic: topic, payload: $0, qos: 1, retain: false) }
        }

        let single = device != nil
        // Validated by ControlCommandDescriptor.object above: the command exists.
        let shape = ControlCommandDescriptor.named(command)?.result ?? .status
        let (replies, allOK) = await withTaskGroup(of: (Int, Bool)?.self) { tasks in
            tasks.addTask {
                try? await Task.sleep(for: .seconds(timeout))
                return nil
            }
            tasks.addTask {
                var replies = 0
                var allOK = true
                // Ends when the timeout cancels this task (the event stream finishes on cancellation).
                for await event in client.events {
                    guard case .message(let m) = event,
                        let sender = Self.device(
                            ofReplyTopic: m.topic,
                            responseTopic: responseTopic,
                            root: broker.root
                        ),
                        (try? StrictJSON.parse(m.payload, limits: .document)) != nil,
                        let reply = try? ControlReply.decode(m.payload, shape: shape),
                        reply.id == id
                    else { continue }
                    replies += 1
                    let honest = reply.device == sender
                    allOK = allOK && reply.ok && honest
                    let encoder = JSONEncoder()
                    encoder.outputFormatting = [.sortedKeys]
                    let result = reply.result.flatMap { try? encoder.encode($0) }
                    // Printed through Printable: a reply is the device's text, and escape sequences in it must not
                    // reach the operator's terminal.
                    print(
                        [
                            Printable.text(sender, limit: 64),
                            reply.ok ? "ok" : "FAILED",
                            "\(reply.code)",
                            Printable.text(reply.message, limit: 2000)
                                + (honest
                                    ? "" : " [the reply names the device \(Printable.text(reply.device, limit: 64))]"),
                            result.map { Printable.text(String(decoding: $0, as: UTF8.self), limit: 100_000) } ?? "",
                        ].joined(separator: "\t")
                    )
                    if single { break }
                }
                return (replies, allOK)
            }
            var outcome: (Int, Bool)?
            while let next = await tasks.next() {
                if let counts = next {
                    outcome = counts
                }
                tasks.cancelAll()
            }
            return outcome ?? (0, true)
        }
        await client.disconnect(flushTimeout: 1)
        if replies == 0 {
            printError(
                "no reply within \(timeout) s on \(replyFilter): is the device connected, and does it read \(topic)?"
            )
            throw ExitCode(2)
        }
        if !allOK { throw ExitCode(1) }
    }

    /// The device whose reply arrived on `topic`: the last level under our response topic (MQTT 5), or the
    /// `{device}` of `{root}/control/reply` (3.1.1); nil for any other topic.
    static func device(ofReplyTopic topic: String, responseTopic: String, root template: String) -> String? {
        if topic.hasPrefix(responseTopic + "/") {
            let device = String(topic.dropFirst(responseTopic.count + 1))
            return device.contains("/") ? nil : device
        }
        let pattern = TopicScheme(template: template, device: "\u{0}").controlReply
        let parts = pattern.components(separatedBy: "\u{0}")
        guard parts.count == 2, topic.hasPrefix(parts[0]), topic.hasSuffix(parts[1]),
            topic.count > parts[0].count + parts[1].count
        else { return nil }
        let device = String(topic.dropFirst(parts[0].count).dropLast(parts[1].count))
        return device.contains("/") ? nil : device
    }
}
