import AgentControl
import AgentPipeline
import AgentPorts
import AgentRuntime
import Foundation
import MotionModel
import MotionWire
import TestSupport
import Testing

/// Every payload the real agent publishes, checked against docs/schemas: a real mosquitto, the real binary on the
/// simulated IMU (every sensor, every stream, submersion and temperature included, metrics every second), captured by a real
/// subscriber and handed to clients/python/tests/check_capture.py, which validates each JSON payload with
/// `jsonschema` (draft 2020-12), decodes each binary batch with the reference client, and checks seq continuity
/// and the values' sanity.
///
/// Two runs of the agent, each on its own device id (so seq starts at 1 on every topic):
/// 1. binary batches on the four sample streams (device motion in layout version 2: its accuracies, and its
///    relativeAttitude while a given reference is set, checked here too); unsigned commands — applied ones,
///    refused ones and one that is not JSON — and a clean stop (SIGTERM: the goodbye status);
/// 2. JSON batches, then single samples (set-batch 1), the device-motion stream in all four reference frames and with a
///    captured reference attitude (relativeAttitude);
///    signing on (control.trusted_keys_file): Ed25519-signed commands, an unsigned one and one signed by a key the device does not trust; SIGKILL (the will).
///
/// The checker needs a Python with jsonschema: MOTION_AGENT_PYTHON, which scripts/test.sh sets to the venv it
/// creates (.build/python-venv), or that venv itself. Without either the test fails and says so; it never skips.
@Suite(.timeLimit(.minutes(15)), .serialized) struct SchemaEndToEndTests {
    static let repository = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path
    static let binaryDevice = "e2e-schema-bin"
    static let jsonDevice = "e2e-schema-json"
    /// The part of every topic after `{root}/`: each must be seen, or the check proves nothing about it.
    static let topicKinds = [
        "accelerometer", "gyroscope", "magnetometer", "device-motion", "pedometer", "pedometer/events", "activity",
        "altimeter", "altimeter/absolute", "submersion", "temperature", "status", "configuration", "metrics", "control",
        "control/reply",
    ]
    /// The topics the agent publishes by itself, before any command (the control topics are ours).
    static let publishedKinds = topicKinds.filter { $0 != "control" && $0 != "control/reply" }
    static let sampleStreams = ["accelerometer", "gyroscope", "magnetometer", "device-motion"]

    struct SetupError: Error, CustomStringConvertible {
        var description: String
    }

    /// The interpreter that runs the checker: MOTION_AGENT_PYTHON, else the venv scripts/test.sh creates.
    static func python() throws -> String {
        if let path = ProcessInfo.processInfo.environment["MOTION_AGENT_PYTHON"], !path.isEmpty {
            guard FileManager.default.isExecutableFile(atPath: path) else {
                throw SetupError(
                    description:
                        "MOTION_AGENT_PYTHON=\(path) is not an executable — run `bash scripts/test.sh`, which creates .build/python-venv with jsonschema, paho-mqtt and pytest"
                )
            }
            return path
        }
        let venv = repository + "/.build/python-venv/bin/python"
        guard FileManager.default.isExecutableFile(atPath: venv) else {
            throw SetupError(
                description:
                    "no Python to run the schema checker: MOTION_AGENT_PYTHON is unset and \(venv) does not exist — run `bash scripts/test.sh` (it creates that venv with jsonschema, paho-mqtt and pytest from PyPI), or set MOTION_AGENT_PYTHON to a python 3.11+ that has jsonschema"
            )
        }
        return venv
    }

    static func streams(batch: Int, encoding: String) -> String {
        """
        streams:
          accelerometer: {enabled: true, rate_hz: 50, batch: \(batch), encoding: \(encoding)}
          gyroscope: {enabled: true, rate_hz: 50, batch: \(batch), encoding: \(encoding)}
          magnetometer: {enabled: true, rate_hz: 25, batch: \(max(2, batch / 2)), encoding: \(encoding)}
          device-motion: {enabled: true, rate_hz: 50, batch: \(batch), encoding: \(encoding)}
          pedometer: {enabled: true, rate_hz: 2}
          activity: {enabled: true, rate_hz: 1}
          altimeter: {enabled: true, rate_hz: 2}
          submersion: {enabled: true, rate_hz: 2}
          temperature: {enabled: true, rate_hz: 2}
        """
    }

    /// The part of `topic` after `motion/<device>/`.
    static func kind(_ topic: String, device: String) -> String? {
        let prefix = "motion/\(device)/"
        return topic.hasPrefix(prefix) ? String(topic.dropFirst(prefix.count)) : nil
    }

    static func kinds(_ subscriber: CapturingSubscriber, device: String) -> Set<String> {
        Set(subscriber.messages.compactMap { kind($0.topic, device: device) })
    }

    static func publish(_ subscriber: CapturingSubscriber, _ topic: String, _ payload: [UInt8]) throws {
        _ = try payload.withUnsafeBytes {
            try subscriber.client.publish(topic: topic, payload: $0, qos: 1, retain: false)
        }
    }

    static func json(_ object: [String: Any]) throws -> [UInt8] {
        Array(try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]))
    }

    /// Waits until `device` has answered `count` commands.
    static func waitForReplies(_ subscriber: CapturingSubscriber, device: String, count: Int) async throws {
        try await subscriber.waitFor(count: count, on: "motion/\(device)/control/reply", timeout: 20)
    }

    /// Run 1's binary device-motion batches, as a binary subscriber reads them: layout version 2, the attitude
    /// accuracies in every record (−1 heading accuracy only in xArbitraryZVertical), and relativeAttitude =
    /// given⁻¹ ⊗ attitude, with the reply's reference time, in the records between set- and clear-reference-attitude.
    static func checkBinaryDeviceMotion(_ subscriber: CapturingSubscriber) throws {
        let topic = "motion/\(binaryDevice)/device-motion"
        let batches = subscriber.messages(on: topic).filter { $0.payload.starts(with: Array("MAB".utf8)) }
        #expect(batches.count >= 5, "binary device-motion batches captured: \(batches.count)")
        #expect(batches.allSatisfy { $0.payload[3] == 2 }, "device motion is published in layout version 2")
        var samples: [(seq: UInt64, motion: DeviceMotion)] = []
        for batch in batches {
            for message in try PayloadDecoder.decode(batch.payload, kind: .deviceMotion) {
                guard case .deviceMotion(let motion) = message.payload else { continue }
                samples.append((message.envelope.seq, motion))
            }
        }
        for (seq, m) in samples {
            #expect(
                (0...180).contains(m.inclinationAccuracy),
                "seq \(seq): inclinationAccuracy \(m.inclinationAccuracy)"
            )
            if m.referenceFrame == .xArbitraryZVertical {
                #expect(
                    m.headingAccuracy == -1,
                    "seq \(seq): headingAccuracy \(m.headingAccuracy) in \(m.referenceFrame)"
                )
            } else {
                #expect((0...180).contains(m.headingAccuracy), "seq \(seq): headingAccuracy \(m.headingAccuracy)")
            }
        }
        #expect(
            Set(samples.map(\.motion.inclinationAccuracy)).count > 1,
            "the inclination accuracy changes over a walk (not a constant)"
        )
        let reply = try #require(
            subscriber.messages(on: "motion/\(binaryDevice)/control/reply").map(payloadJSON).first {
                $0["id"] as? String == "bin-reference"
            }
        )
        let state = try #require(reply["result"] as? [String: Any], "\(reply)")
        let reference = try #require(state["referenceAttitude"] as? [String: Any], "\(reply)")
        let referenceTime = try #require(reference["time"] as? Double, "\(reference)")
        let given = Quaternion(w: 0.8, x: 0, y: 0.6, z: 0)
        let relative = samples.filter { $0.motion.relativeAttitude != nil }
        #expect(
            relative.count >= 20,
            "records with relativeAttitude in the 1.5 s the reference was set: \(relative.count)"
        )
        let seqs = relative.map(\.seq)
        if let first = seqs.first {
            #expect(seqs == Array(first..<(first + UInt64(seqs.count))), "one unbroken run, set to clear")
        }
        #expect(samples.contains { $0.motion.relativeAttitude == nil && $0.seq > (seqs.last ?? 0) }, "cleared")
        for (seq, m) in relative {
            let r = try #require(m.relativeAttitude)
            #expect(abs(r.referenceTime - referenceTime) < 0.002, "seq \(seq): referenceTime \(r.referenceTime)")
            // f32 on the wire for both quaternions: agreement to a few 1e-7 per component.
            let expected = m.attitude.multiplied(byInverseOf: given)
            let sign =
                r.quaternion.w * expected.w + r.quaternion.x * expected.x + r.quaternion.y * expected.y
                    + r.quaternion.z * expected.z < 0 ? -1.0 : 1.0
            let difference = max(
                abs(r.quaternion.w - sign * expected.w),
                abs(r.quaternion.x - sign * expected.x),
                abs(r.quaternion.y - sign * expected.y),
                abs(r.quaternion.z - sign * expected.z)
            )
            #expect(difference < 2e-6, "seq \(seq): relativeAttitude \(r.quaternion), expected \(expected)")
        }
    }

    @Test func everyPayloadMatchesItsSchemaAndBinaryBatchesDecode() async throws {
        let python = try Self.python()
        let broker = try await MosquittoBroker.started()
        let subscriber = try await CapturingSubscriber(
            broker: broker,
            filters: ["motion/\(Self.binaryDevice)/#", "motion/\(Self.jsonDevice)/#"]
        )

        // Run 1: binary batches, unsigned commands, a clean stop.
        let binary = try AgentProcess(
            config: AgentProcess.config(
                device: Self.binaryDevice,
                port: broker.port,
                scenario: "walking",
                streams: Self.streams(batch: 10, encoding: "binary"),
                extra: "metrics:\n  interval_s: 1"
            )
        )
        defer { binary.runner.kill() }
        try await subscriber.waitUntil(timeout: 90, "every topic of \(Self.binaryDevice)") { messages in
            let seen = Set(messages.compactMap { Self.kind($0.topic, device: Self.binaryDevice) })
            return Self.publishedKinds.allSatisfy(seen.contains)
        }
        let control = "motion/\(Self.binaryDevice)/control"
        let now = Date().timeIntervalSince1970
        let commands: [[String: Any]] = [
            ["id": "bin-reload", "command": "reload-config"],
            ["id": "bin-status", "command": "status"],
            ["id": "bin-ping", "command": "ping", "timestamp": now],
            ["id": "bin-list", "command": "list-streams"],
            ["id": "bin-rate", "command": "set-rate", "stream": "altimeter", "rate_hz": 1],
            ["id": "bin-qos", "command": "set-qos", "stream": "activity", "qos": 0],
            ["id": "bin-frame", "command": "set-reference-frame", "frame": "xMagneticNorthZVertical"],
            // A given reference (36.87° about y): binary device-motion records carry relativeAttitude until the
            // clear below (the loop pauses 1.5 s after this one).
            ["id": "bin-reference", "command": "set-reference-attitude", "w": 0.8, "x": 0, "y": 0.6, "z": 0],
            ["id": "bin-reference-clear", "command": "clear-reference-attitude"],
            ["id": "bin-query-steps", "command": "query-pedometer", "from": now - 60, "to": now + 1],
            ["id": "bin-query-activity", "command": "query-activity", "from": now - 60, "to": now + 1],
            ["id": "bin-reset", "command": "reset-pedometer"],
            // Refused by the agent although the schema accepts it: true north needs `location` (409).
            ["id": "refused-true-north", "command": "set-reference-frame", "frame": "xTrueNorthZVertical"],
            // Refused by the agent and by control-request.schema.json.
            ["id": "bad-unknown-command", "command": "fly"],
            ["id": "bad-unknown-stream", "command": "start", "stream": "barometer"],
            ["id": "bad-extra-key", "command": "ping", "extra": 1],
            ["id": "bad-batch-stream", "command": "set-batch", "stream": "pedometer", "batch": 5],
            ["id": "bad-reference-partial", "command": "set-reference-attitude", "w": 1, "x": 0],
        ]
        for command in commands {
            try Self.publish(subscriber, control, try Self.json(command))
            try await Task.sleep(for: command["id"] as? String == "bin-reference" ? .seconds(3) : .milliseconds(100))
        }
        try Self.publish(subscriber, control, Array("this is not JSON".utf8))
        try await Self.waitForReplies(subscriber, device: Self.binaryDevice, count: commands.count + 1)
        // Binary device-motion batches in the magnetic-north frame.
        try await Task.sleep(for: .seconds(1))
        binary.runner.terminate()
        let code = await binary.runner.waitForExit(timeout: 15)
        #expect(code == 0, "the agent's exit status after SIGTERM; stderr: \(binary.runner.standardError.suffix(2000))")
        try await subscriber.waitUntil(timeout: 10, "the goodbye of \(Self.binaryDevice)") { messages in
            messages.contains {
                $0.topic == "motion/\(Self.binaryDevice)/status" && payloadJSON($0)["reason"] as? String == "shutdown"
            }
        }

        // Run 2: JSON batches, then single samples, all four frames; signed commands; the will.
        let directory = NSTemporaryDirectory() + "motion-agent-e2e-schema-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let operatorKey = try OperatorSigningKey(id: "schema-ops", privateKey: Array(repeating: 7, count: 32))
        try (operatorKey.trustLine + "\n").write(toFile: directory + "/trusted.keys", atomically: true, encoding: .utf8)
        let jsonAgent = try AgentProcess(
            config: AgentProcess.config(
                device: Self.jsonDevice,
                port: broker.port,
                scenario: "walking",
                streams: Self.streams(batch: 5, encoding: "json"),
                extra: """
                    metrics:
                      interval_s: 1
                    location:
                      latitude: 48.2
                      longitude: 16.37
                    control:
                      trusted_keys_file: trusted.keys
                    """
            ),
            directory: directory
        )
        defer { jsonAgent.runner.kill() }
        try await subscriber.waitUntil(timeout: 60, "JSON batches and the birth of \(Self.jsonDevice)") { messages in
            let seen = Set(messages.compactMap { Self.kind($0.topic, device: Self.jsonDevice) })
            return (Self.sampleStreams + ["status"]).allSatisfy(seen.contains)
        }
        let jsonControl = "motion/\(Self.jsonDevice)/control"
        var counter = Int(Date().timeIntervalSince1970 * 1e6)
        func members(
            _ id: String,
            _ command: String,
            _ arguments: [String: Any]
        ) -> [(key: String, value: StrictJSON.Value)] {
            counter += 1
            var members: [(key: String, value: StrictJSON.Value)] = [
                ("target", .string(jsonControl)), ("counter", .number(String(counter))), ("id", .string(id)),
                ("command", .string(command)),
            ]
            for (name, value) in arguments.sorted(by: { $0.key < $1.key }) {
                members.append((name, (value as? String).map { .string($0) } ?? .number("\(value)")))
            }
            return members
        }
        func signed(_ id: String, _ command: String, _ arguments: [String: Any] = [:]) throws -> [UInt8] {
            SignedEnvelope.seal(members(id, command, arguments), with: operatorKey)
        }
        var sent = 0
        func send(_ payload: [UInt8], pause: Duration = .milliseconds(100)) async throws {
            try Self.publish(subscriber, jsonControl, payload)
            sent += 1
            try await Task.sleep(for: pause)
        }
        try await send(try signed("json-status", "status"))
        try await send(try signed("json-ping", "ping"))
        for frame in ["xArbitraryCorrectedZVertical", "xMagneticNorthZVertical", "xTrueNorthZVertical"] {
            try await send(
                try signed("json-frame-\(frame)", "set-reference-frame", ["frame": frame]),
                pause: .seconds(1)
            )
        }
        // A captured reference: device motion carries relativeAttitude from here on, batched and single.
        try await send(try signed("json-reference", "set-reference-attitude"), pause: .seconds(1))
        for stream in Self.sampleStreams {
            try await send(try signed("json-single-\(stream)", "set-batch", ["stream": stream, "batch": 1]))
        }
        // Signing is on: an unsigned command, a tampered one and an envelope with an extra key are refused (401).
        try await send(try Self.json(["id": "refused-unsigned", "command": "ping"]))
        let other = try OperatorSigningKey(id: "schema-ops", privateKey: Array(repeating: 9, count: 32))
        try await send(SignedEnvelope.seal(members("refused-tampered", "ping", [:]), with: other))
        try await send(
            try Self.json(["signed": Data("{}".utf8).base64EncodedString(), "signature": "00", "id": "bad-envelope"])
        )
        try await Self.waitForReplies(subscriber, device: Self.jsonDevice, count: sent)
        try await Task.sleep(for: .seconds(1.5))  // single samples on every sample stream
        jsonAgent.runner.kill()  // SIGKILL: the broker publishes the will
        try await subscriber.waitUntil(timeout: 15, "the will of \(Self.jsonDevice)") { messages in
            messages.contains {
                $0.topic == "motion/\(Self.jsonDevice)/status"
                    && payloadJSON($0)["reason"] as? String == "connection lost"
            }
        }

        // Every topic kind was seen, in one run or the other, before anything is checked.
        let seen = Self.kinds(subscriber, device: Self.binaryDevice).union(
            Self.kinds(subscriber, device: Self.jsonDevice)
        )
        #expect(
            Set(Self.topicKinds).subtracting(seen).isEmpty,
            "topics never seen: \(Set(Self.topicKinds).subtracting(seen))"
        )
        #expect(subscriber.messages.contains { $0.payload.starts(with: Array("MAB".utf8)) }, "no binary batch captured")

        // MotionWire's decoder, the one sub, watch and the benchmark use, reads every stream message back.
        var decodedKinds = Set<PayloadKind>()
        for device in [Self.binaryDevice, Self.jsonDevice] {
            let topics = TopicScheme(root: "motion/\(device)")
            for m in subscriber.messages {
                guard let kind = topics.subject(of: m.topic).flatMap(PayloadKind.init(subject:)) else { continue }
                do {
                    #expect(try !PayloadDecoder.decode(m.payload, kind: kind).isEmpty, "\(m.topic)")
                    decodedKinds.insert(kind)
                } catch {
                    Issue.record("\(m.topic): \(error)")
                }
            }
        }
        // A motion event needs a drop or a fall, which the simulated scenarios do not have: EventsStreamTests and
        // the goldens cover its payloads (check_capture.py's OPTIONAL_KINDS says the same).
        let expectedKinds = Set(PayloadKind.allCases).subtracting([.events])
        #expect(
            decodedKinds.isSuperset(of: expectedKinds),
            "kinds never decoded: \(expectedKinds.subtracting(decodedKinds))"
        )

        try Self.checkBinaryDeviceMotion(subscriber)

        // The capture, for the checker: topic and base64 payload in arrival order.
        let capture: [String: Any] = [
            "capturedAt": Date().timeIntervalSince1970,
            "messages": subscriber.messages.map { m in
                ["topic": m.topic, "payload": Data(m.payload).base64EncodedString(), "qos": m.qos, "retain": m.retain]
            },
        ]
        let capturePath = NSTemporaryDirectory() + "motion-agent-schema-capture-\(UUID().uuidString.prefix(8)).json"
        try JSONSerialization.data(withJSONObject: capture).write(to: URL(fileURLWithPath: capturePath))
        let checker = ProcessRunner(
            executable: python,
            arguments: [
                Self.repository + "/clients/python/tests/check_capture.py",
                "--schemas", Self.repository + "/docs/schemas", "--require-coverage", capturePath,
            ]
        )
        try checker.start()
        let status = await checker.waitForExit(timeout: 300)
        #expect(
            status == 0,
            """
            check_capture.py failed (exit \(String(describing: status))) on \(subscriber.messages.count) messages, \
            kept in \(capturePath):
            \(checker.standardOutput)\(checker.standardError)
            """
        )
        if status == 0 { try? FileManager.default.removeItem(atPath: capturePath) }
        await subscriber.close()
    }
}
