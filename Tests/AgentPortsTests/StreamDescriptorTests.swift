import AgentPorts
import Foundation
import Testing

/// The stream table is the one list of streams: these tests hold the documents that describe streams outside the
/// code — the JSON Schemas, payloads.md, config.yaml and the Python reference client — to it, so adding a stream
/// without its schema, docs or client constants fails here.
@Suite struct StreamDescriptorTests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    static func text(_ path: String) throws -> String {
        try String(contentsOf: repository.appendingPathComponent(path), encoding: .utf8)
    }

    @Test func everyStreamHasOneDescriptorAndEveryPayloadOneTopic() {
        #expect(StreamDescriptor.table.map(\.name) == StreamName.allCases)
        #expect(Set(StreamDescriptor.allTopics.map(\.payload)) == Set(PayloadKind.allCases))
        #expect(StreamDescriptor.allTopics.count == PayloadKind.allCases.count)
        #expect(Set(StreamDescriptor.allTopics.map(\.path)).count == StreamDescriptor.allTopics.count)
        for descriptor in StreamDescriptor.table {
            #expect(descriptor.primary.path == descriptor.name.rawValue, "a stream's own topic is its name")
            #expect(descriptor.topics.allSatisfy { $0.stream == descriptor.name })
            #expect(descriptor.topics.dropFirst().allSatisfy { $0.path.hasPrefix(descriptor.name.rawValue + "/") })
            if descriptor.isRawSensor { #expect(descriptor.requiredSensors == [descriptor.pacingSensor]) }
            for sensor in descriptor.homeAssistant {
                #expect(descriptor.topics.indices.contains(sensor.topic), "\(sensor.objectID)")
            }
        }
        let objectIDs = StreamDescriptor.table.flatMap(\.homeAssistant).map(\.objectID)
        #expect(Set(objectIDs).count == objectIDs.count, "Home Assistant object ids are unique per device")
    }

    /// What a device publishes under its root: every subject but the two it only reads.
    static let devicePublishes: Set<String> = Set(
        TopicScheme.Subject.all.filter { $0 != .control && $0 != .desired }.map(\.path)
    )

    /// The shipped ACLs (central and edge) let a device write exactly the topics it publishes, one line each —
    /// never a wildcard that would reach its control or desired topic — and read only control and desired ones.
    @Test(arguments: ["Deploy/mosquitto/acl", "Deploy/mosquitto-bridge/edge.acl"])
    func theShippedACLGrantsADeviceExactlyItsTopics(_ path: String) throws {
        let lines = try Self.text(path).split(separator: "\n").map(String.init).filter { !$0.hasPrefix("#") }
        let patterns = lines.filter { $0.hasPrefix("pattern ") }
        let writes = Set(
            patterns.compactMap { line -> String? in
                guard line.hasPrefix("pattern write motion/%u/") else { return nil }
                return String(line.dropFirst("pattern write motion/%u/".count))
            }
        )
        #expect(
            writes == Self.devicePublishes,
            "missing: \(Self.devicePublishes.subtracting(writes)), extra: \(writes.subtracting(Self.devicePublishes))"
        )
        let others = patterns.filter { !$0.hasPrefix("pattern write motion/%u/") }
        #expect(
            Set(others) == [
                "pattern write motion-ctl/+/reply/%u", "pattern write homeassistant/+/%u/+/config",
                "pattern read motion/%u/control", "pattern read motion/fleet/control", "pattern read motion/%u/desired",
                "pattern read motion/fleet/desired",
            ],
            "\(others)"
        )
        #expect(!lines.contains { $0.contains("%c") }, "a client chooses its id: no pattern may rely on it")
        #expect(!patterns.contains { $0.contains("#") || $0.hasPrefix("pattern readwrite") })
    }

    /// Sparkplug is off by default: no active line of the shipped ACLs grants an spBv1.0/ topic, and the commented
    /// per-device template grants the Sparkplug account its own node's topics only — births, deaths and data to
    /// write, its commands and the primary host's STATE to read — while only the host's account writes commands.
    @Test(arguments: ["Deploy/mosquitto/acl", "Deploy/mosquitto-bridge/edge.acl"])
    func theShippedACLGrantsSparkplugOnlyThroughItsTemplate(_ path: String) throws {
        let lines = try Self.text(path).split(separator: "\n").map(String.init)
        #expect(!lines.filter { !$0.hasPrefix("#") }.contains { $0.contains("spBv1.0") })
        let template = try #require(Self.sparkplugTemplate(lines))
        #expect(
            template.device == [
                "topic write spBv1.0/motion/NBIRTH/imu-17", "topic write spBv1.0/motion/NDEATH/imu-17",
                "topic write spBv1.0/motion/NDATA/imu-17", "topic write spBv1.0/motion/DBIRTH/imu-17/+",
                "topic write spBv1.0/motion/DDATA/imu-17/+", "topic write spBv1.0/motion/DDEATH/imu-17/+",
                "topic read spBv1.0/motion/NCMD/imu-17", "topic read spBv1.0/motion/DCMD/imu-17/+",
                "topic read spBv1.0/STATE/scada",
            ]
        )
        #expect(
            template.host == [
                "topic read spBv1.0/#", "topic write spBv1.0/+/NCMD/+", "topic write spBv1.0/+/DCMD/+/+",
                "topic readwrite spBv1.0/STATE/scada",
            ]
        )
    }

    /// The commented `user imu-17-sparkplug` and `user scada` blocks of an ACL, uncommented.
    static func sparkplugTemplate(_ lines: [String]) -> (device: [String], host: [String])? {
        func block(_ user: String) -> [String]? {
            guard let start = lines.firstIndex(of: "# user \(user)") else { return nil }
            return Array(
                lines[(start + 1)...].prefix { $0.hasPrefix("# topic ") }.map { String($0.dropFirst(2)) }
            )
        }
        guard let device = block("imu-17-sparkplug"), let host = block("scada") else { return nil }
        return (device, host)
    }

    /// The edge broker bridges out exactly what devices publish: the control and desired topics only come in.
    @Test func theEdgeBridgeCarriesOutExactlyWhatDevicesPublish() throws {
        let lines = try Self.text("Deploy/mosquitto-bridge/edge.conf").split(separator: "\n").map(String.init)
        let out = Set(
            lines.compactMap { line -> String? in
                guard line.hasPrefix("topic motion/+/"), line.hasSuffix(" out 1") else { return nil }
                return String(line.dropFirst("topic motion/+/".count).dropLast(" out 1".count))
            }
        )
        #expect(out == Self.devicePublishes)
        #expect(lines.contains("topic motion-ctl/+/reply/+ out 1"))
        #expect(lines.filter { $0.hasPrefix("topic ") && $0.hasSuffix(" out 1") }.count == out.count + 1)
        #expect(lines.contains("acl_file /etc/mosquitto/edge.acl") && lines.contains("use_username_as_clientid true"))
    }

    @Test func everyTopicHasItsSchemaTitledWithItsTopicAndCoreMotionType() throws {
        for topic in StreamDescriptor.allTopics {
            let data = try Data(contentsOf: Self.repository.appendingPathComponent("docs/schemas/\(topic.schema)"))
            let schema = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
            #expect(schema["title"] as? String == "{root}/\(topic.path) — \(topic.coreMotion)", "\(topic.schema)")
            #expect((schema["$id"] as? String)?.hasSuffix("/" + topic.schema) == true, "\(topic.schema)")
        }
        let index = try Self.text("docs/schemas/README.md")
        for topic in StreamDescriptor.allTopics {
            #expect(index.contains("| `{root}/\(topic.path)` | [\(topic.schema)](\(topic.schema)) |"), "\(topic.path)")
        }
    }

    @Test func payloadsMdListsAndDescribesEveryTopic() throws {
        let doc = try Self.text("docs/payloads.md")
        let lines = doc.split(separator: "\n").map(String.init)
        for topic in StreamDescriptor.allTopics {
            #expect(
                lines.contains { $0.hasPrefix("| `{root}/\(topic.path)` |") },
                "the topic table lacks \(topic.path)"
            )
            #expect(
                doc.contains("`{root}/\(topic.path)` — `\(topic.coreMotion)`"),
                "payloads.md has no section for {root}/\(topic.path) — \(topic.coreMotion)"
            )
        }
        for sensor in StreamDescriptor.table.flatMap(\.homeAssistant) {
            #expect(doc.contains("`\(sensor.objectID)`"), "Home Assistant's \(sensor.objectID) is not in payloads.md")
        }
    }

    @Test func configYamlHasEveryStreamWithItsKeys() throws {
        let yaml = try Self.text("config.yaml")
        let lines = yaml.split(separator: "\n").map(String.init)
        guard let start = lines.firstIndex(of: "streams:") else {
            Issue.record("config.yaml has no streams: section")
            return
        }
        for descriptor in StreamDescriptor.table {
            let header = "  \(descriptor.name.rawValue):"
            guard let at = lines[start...].firstIndex(of: header) else {
                Issue.record("config.yaml lacks streams.\(descriptor.name.rawValue)")
                continue
            }
            let section = lines[(at + 1)...].prefix { $0.hasPrefix("    ") || $0.hasPrefix("  #") || $0.isEmpty }
            let keys = section.compactMap { line -> String? in
                guard line.hasPrefix("    "), !line.hasPrefix("     "), let colon = line.firstIndex(of: ":") else {
                    return nil
                }
                let key = line[line.index(line.startIndex, offsetBy: 4)..<colon]
                return key.hasPrefix("#") ? nil : String(key)
            }
            #expect(keys == descriptor.settingKeys, "config.yaml streams.\(descriptor.name.rawValue)")
        }
    }

    @Test func thePythonClientKnowsEveryTopicAndWhichStreamsBatch() throws {
        let source = try Self.text("clients/python/motion_agent_client/decoder.py")
        func tuple(_ name: String) throws -> [String] {
            let start = try #require(source.range(of: "\n\(name) = ("))
            let end = try #require(source.range(of: ")", range: start.upperBound..<source.endIndex))
            return source[start.upperBound..<end.lowerBound].split(separator: "\"", omittingEmptySubsequences: false)
                .enumerated()
                .filter { $0.offset % 2 == 1 }.map { String($0.element) }
        }
        #expect(try tuple("SAMPLE_STREAMS") == StreamDescriptor.table.filter(\.batches).map(\.name.rawValue))
        let kinds = try tuple("TOPIC_KINDS")
        for topic in StreamDescriptor.allTopics {
            #expect(kinds.contains(topic.path), "clients/python TOPIC_KINDS lacks \(topic.path)")
        }
    }
}
