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
              motion-agent ctl --hmac-key-file fleet.key --device imu-17 status
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
    @Option(help: "Sign the command with the HMAC key in this file (the devices' control.hmac_key_file).")
    var hmacKeyFile: String?
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
            let bytes = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
            if case .failure(let failure) = ControlRequest.parse(Array(bytes)) {
                throw failure
            }
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
        var payload = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
        if let hmacKeyFile {
            payload = Data(try Self.sign(object, keyFile: hmacKeyFile))
        }
        let topic: String
        if let device {
            topic = broker.topics(device: device).control
        } else if let group {
            topic = TopicScheme.groupControl(group)
        } else {
            topic = fleetTopic
        }

        let client = MosquittoClient(logger: Logger(label: "motion-agent.ctl"))
        let clientID = "motion-ctl-\(id.prefix(8))"
        try client.connect(try broker.connectOptions(clientID: clientID))
        try await awaitConnection(client, timeout: timeout)
        // MQTT 5: replies come to our own response topic with our correlation data. 3.1.1: on every device's
        // reply topic, matched by id.
        let replyFilter =
            broker.protocol == .v5
            ? TopicScheme.operatorReply(clientID: clientID) : TopicScheme.everyDeviceReply(template: broker.root)
        try client.subscribe([replyFilter], qos: 1)
        try await Task.sleep(for: .milliseconds(100))
        if broker.protocol == .v5 {
            try client.publishRequest(
                topic: topic,
                payload: Array(payload),
                responseTopic: replyFilter,
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
                        let reply = try? ControlReply.decode(m.payload, shape: shape),
                        reply.id == id
                    else { continue }
                    replies += 1
                    allOK = allOK && reply.ok
                    let encoder = JSONEncoder()
                    encoder.outputFormatting = [.sortedKeys]
                    let result = reply.result.flatMap { try? encoder.encode($0) }
                    print(
                        [
                            reply.device,
                            reply.ok ? "ok" : "FAILED",
                            "\(reply.code)",
                            reply.message,
                            result.map { String(decoding: $0, as: UTF8.self) } ?? "",
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

    /// The signed envelope of `command` with a fresh random nonce (docs/control.md, "Signed commands").
    static func sign(_ command: [String: Any], keyFile: String) throws -> [UInt8] {
        // The same reading rules as the agent's control.hmac_key_file, so both sides derive the same key.
        var settings = ControlSettings()
        settings.hmacKeyFile = keyFile
        let key: [UInt8]
        do {
            guard let read = try settings.readHMACKey() else { throw ValidationError("no key file") }
            key = read
        } catch {
            throw ValidationError("--hmac-key-file: \(error)")
        }
        var rng = SystemRandomNumberGenerator()
        let nonce = (0..<16).map { _ in
            let byte = UInt8.random(in: 0...255, using: &rng)
            return (byte < 16 ? "0" : "") + String(byte, radix: 16)
        }.joined()
        var signed = command
        signed["nonce"] = nonce
        let bytes = try JSONSerialization.data(withJSONObject: signed, options: [.sortedKeys])
        return CommandSignature(key: key).envelope(for: Array(bytes))
    }
}
