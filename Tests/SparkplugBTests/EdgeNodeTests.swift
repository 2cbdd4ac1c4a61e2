import Logging
import SwiftProtobuf
import Testing

@testable import SparkplugB

/// The edge node's decisions, event by event, with a stepped clock and a fixed wall clock: no broker.
@Suite struct EdgeNodeTests {
    typealias Node = SparkplugEdgeNode<SteppedClock>
    static let now: UInt64 = 1_795_241_134_057

    static let catalog = try! SparkplugCatalog(
        nodeMetrics: [SparkplugMetricDefinition("Properties/Agent Version", .string)],
        devices: [
            SparkplugDeviceDefinition(
                id: "accelerometer",
                metrics: [
                    SparkplugMetricDefinition("acceleration/x", .float, unit: "g"),
                    SparkplugMetricDefinition("config/enabled", .boolean, isWritable: true),
                    SparkplugMetricDefinition("config/rateHz", .double, unit: "Hz", isWritable: true),
                ]
            ),
            SparkplugDeviceDefinition(id: "gyroscope", metrics: [SparkplugMetricDefinition("rotationRate/x", .float)]),
        ]
    )

    private func make(
        host: String? = nil,
        writes: Node.WritePolicy = .refused(reason: "writes are off (sparkplug.writes: false)"),
        last: UInt8? = nil,
        clock: SteppedClock = SteppedClock()
    ) -> Node {
        Node(
            configuration: try! .init(groupID: "plant", edgeNodeID: "imu-7", primaryHostID: host, writes: writes),
            catalog: Self.catalog,
            lastBirthDeathSequence: last,
            nodeValues: ["Properties/Agent Version": .string("1.2.3")],
            clock: clock,
            wallClockMs: { Self.now }
        )
    }

    private func births(_ actions: [Node.Action]) -> [(SparkplugPayload, [String])] {
        actions.compactMap {
            guard case .publishBirthSequence(let birth, let devices) = $0 else { return nil }
            return (try! SparkplugPayload(serializedBytes: birth.body), devices)
        }
    }

    private func published(_ actions: [Node.Action], _ type: SparkplugMessageType) -> [SparkplugMessage] {
        actions.compactMap {
            guard case .publish(let message) = $0, message.type == type else { return nil }
            return message
        }
    }

    private func nodeValue(_ payload: SparkplugPayload, _ name: String) -> SparkplugPayload.Metric? {
        payload.metrics.first { $0.name == name || $0.alias == Self.catalog.nodeAlias(named: name) }
    }

    private func command(_ metrics: [(name: String?, alias: UInt64?, value: SparkplugMetricValue)]) -> [UInt8] {
        var payload = SparkplugPayload()
        payload.timestamp = Self.now
        payload.metrics = metrics.map { entry in
            var metric = SparkplugPayload.Metric()
            if let name = entry.name { metric.name = name }
            if let alias = entry.alias { metric.alias = alias }
            SparkplugBirthEncoder.setValue(entry.value, on: &metric)
            return metric
        }
        return try! payload.serializedBytes()
    }

    private func state(_ online: Bool, _ timestamp: UInt64) -> Node.Event {
        .message(topic: "spBv1.0/STATE/scada", payload: Array("{\"online\":\(online),\"timestamp\":\(timestamp)}".utf8))
    }

    private func bornNode(
        writes: Node.WritePolicy = .refused(reason: "writes are off"),
        clock: SteppedClock = SteppedClock()
    )
        -> Node
    {
        var node = make(writes: writes, clock: clock)
        _ = node.handle(.connecting(server: 0))
        _ = node.handle(.connected)
        return node
    }

    // MARK: bdSeq and the will

    @Test func everyConnectCarriesTheNextBdSeqPersistedFirstAndItsDeathAsTheWill() throws {
        var node = make()
        let first = node.handle(.connecting(server: 0))
        #expect(first.first == .persistBirthDeathSequence(0), "a first start begins at 0")
        guard case .setWill(let will) = first.last else { throw Failure("no will") }
        #expect(will.topic.description == "spBv1.0/plant/NDEATH/imu-7")
        let death = try SparkplugPayload(serializedBytes: will.body)
        #expect(death.metrics.count == 1 && death.metrics[0].name == "bdSeq" && death.metrics[0].longValue == 0)
        #expect(!death.hasSeq)
        _ = node.handle(.disconnected)
        #expect(node.handle(.connecting(server: 0)).first == .persistBirthDeathSequence(1))
    }

    @Test func aRestartContinuesAfterThePersistedBdSeqAndWrapsAt255() {
        var node = make(last: 41)
        #expect(node.handle(.connecting(server: 0)).first == .persistBirthDeathSequence(42))
        var wrapping = make(last: 255)
        #expect(wrapping.handle(.connecting(server: 0)).first == .persistBirthDeathSequence(0))
    }

    // MARK: Birth

    @Test func aConnackSubscribesThenBirthsTheNodeAndEveryDeviceWithTheWillsBdSeq() throws {
        var node = make(last: 6)
        _ = node.handle(.connecting(server: 0))
        let actions = node.handle(.connected)
        #expect(
            actions.prefix(2) == [
                .subscribe(topic: "spBv1.0/plant/NCMD/imu-7"), .subscribe(topic: "spBv1.0/plant/DCMD/imu-7/+"),
            ]
        )
        #expect(actions.last == .setDataFlowing(true))
        let (birth, devices) = try #require(births(actions).first)
        #expect(devices == ["accelerometer", "gyroscope"])
        #expect(nodeValue(birth, "bdSeq")?.longValue == 7)
        #expect(nodeValue(birth, "Node Control/Rebirth")?.booleanValue == false)
        #expect(nodeValue(birth, "Properties/Agent Version")?.stringValue == "1.2.3")
        #expect(birth.metrics.allSatisfy { $0.hasName && $0.hasAlias && $0.hasDatatype && $0.timestamp > 0 })
        #expect(node.phase == .born)
    }

    @Test func aDeviceAwayAtBirthIsLeftOutAndItsReturnIsADeviceBirth() throws {
        var node = make()
        _ = node.handle(.device(id: "gyroscope", available: false))
        _ = node.handle(.connecting(server: 0))
        #expect(try #require(births(node.handle(.connected)).first).1 == ["accelerometer"])
        #expect(
            node.handle(.device(id: "gyroscope", available: true)).contains(.publishDeviceBirth(deviceID: "gyroscope"))
        )
        let away = node.handle(.device(id: "gyroscope", available: false))
        let death = try #require(published(away, .deviceDeath).first)
        #expect(death.topic.description == "spBv1.0/plant/DDEATH/imu-7/gyroscope" && death.body.isEmpty)
        #expect(node.handle(.device(id: "gyroscope", available: false)).isEmpty, "no second death")
    }

    @Test func theEndOfASessionStopsTheDataAndShutdownSaysGoodbye() throws {
        var node = bornNode()
        #expect(node.handle(.disconnected).first == .setDataFlowing(false))
        _ = node.handle(.connecting(server: 0))
        _ = node.handle(.connected)
        let goodbye = node.handle(.shutdown)
        #expect(goodbye.first == .setDataFlowing(false) && goodbye.last == .disconnect(moveToNextServer: false))
        let death = try SparkplugPayload(serializedBytes: try #require(published(goodbye, .nodeDeath).first).body)
        #expect(death.metrics.first?.longValue == 1, "the bdSeq of this session's will")
        #expect(node.handle(.connecting(server: 0)).isEmpty, "nothing after the goodbye")
    }

    // MARK: Primary host

    @Test func withAPrimaryHostTheBirthWaitsForItsOnlineState() throws {
        var node = make(host: "scada")
        _ = node.handle(.connecting(server: 0))
        let connected = node.handle(.connected)
        #expect(connected.contains(.subscribe(topic: "spBv1.0/STATE/scada")))
        #expect(births(connected).isEmpty && node.phase == .awaitingPrimaryHost)
        #expect(
            births(
                node.handle(
                    .message(topic: "spBv1.0/STATE/other", payload: Array("{\"online\":true,\"timestamp\":1}".utf8))
                )
            ).isEmpty
        )
        let online = node.handle(state(true, 100))
        #expect(births(online).count == 1 && online.last == .setDataFlowing(true))
    }

    @Test func theHostGoingOfflineEndsTheSessionWithADeathAndMovesToTheNextServer() throws {
        var node = make(host: "scada")
        _ = node.handle(.connecting(server: 0))
        _ = node.handle(.connected)
        _ = node.handle(state(true, 100))
        let offline = node.handle(state(false, 100))
        #expect(offline.contains(.setDataFlowing(false)))
        #expect(published(offline, .nodeDeath).count == 1)
        #expect(offline.last == .disconnect(moveToNextServer: true))
        #expect(node.phase == .leaving)
        #expect(node.handle(state(true, 200)).isEmpty, "nothing after leaving")
    }

    @Test func backOnAServerWhoseHostIsStillOfflineTheNodeWaitsInsteadOfWalkingAgain() {
        var node = make(host: "scada")
        _ = node.handle(.connecting(server: 0))
        _ = node.handle(.connected)
        _ = node.handle(state(true, 100))
        _ = node.handle(state(false, 100))
        _ = node.handle(.disconnected)
        _ = node.handle(.connecting(server: 0))
        _ = node.handle(.connected)
        let replay = node.handle(state(false, 100))
        #expect(!replay.contains(.disconnect(moveToNextServer: true)) && node.phase == .awaitingPrimaryHost)
        let back = node.handle(state(true, 300))
        #expect(births(back).count == 1, "its return resumes publication with a birth")
    }

    @Test func anOlderOrMalformedStateIsIgnored() {
        var node = make(host: "scada")
        _ = node.handle(.connecting(server: 0))
        _ = node.handle(.connected)
        _ = node.handle(state(true, 500))
        #expect(!node.handle(state(false, 499)).contains(.disconnect(moveToNextServer: true)))
        for payload in [
            "ONLINE", "{\"online\":1,\"timestamp\":600}", "{\"online\":false}", "{\"online\":false,\"timestamp\":-1}",
            "[]",
        ] {
            let actions = node.handle(.message(topic: "spBv1.0/STATE/scada", payload: Array(payload.utf8)))
            #expect(actions.count == 1, "\(payload)")
            guard case .log(.warning, _) = actions.first else {
                Issue.record("no warning for \(payload)")
                continue
            }
        }
        #expect(node.phase == .born)
    }

    // MARK: Commands

    @Test func aRebirthRequestByNameOrAliasRepeatsTheBirthWithTheSameBdSeq() throws {
        let clock = SteppedClock()
        var node = bornNode(clock: clock)
        clock.advance(by: .seconds(5))
        let byName = node.handle(
            .message(
                topic: "spBv1.0/plant/NCMD/imu-7",
                payload: command([("Node Control/Rebirth", nil, .boolean(true))])
            )
        )
        let (rebirth, devices) = try #require(births(byName).first)
        #expect(nodeValue(rebirth, "bdSeq")?.longValue == 0 && devices.count == 2)
        clock.advance(by: .seconds(5))
        let alias = try #require(Self.catalog.nodeAlias(named: "Node Control/Rebirth"))
        #expect(
            births(
                node.handle(
                    .message(topic: "spBv1.0/plant/NCMD/imu-7", payload: command([(nil, alias, .boolean(true))]))
                )
            ).count == 1
        )
    }

    @Test func rebirthRequestsWithinTheIntervalCoalesceIntoOne() throws {
        let clock = SteppedClock()
        var node = bornNode(clock: clock)
        let request = Node.Event.message(
            topic: "spBv1.0/plant/NCMD/imu-7",
            payload: command([("Node Control/Rebirth", nil, .boolean(true))])
        )
        let first = node.handle(request)
        guard case .wait(let due) = first.first else { throw Failure("no wait: \(first)") }
        #expect(node.handle(request).isEmpty && node.handle(request).isEmpty)
        #expect(node.handle(.tick).isEmpty, "early tick")
        clock.advance(by: .seconds(1))
        #expect(clock.now >= due)
        #expect(births(node.handle(.tick)).count == 1)
        #expect(node.handle(.tick).isEmpty)
    }

    @Test func writesAreRefusedWhileOffWithTheReasonPublishedInNodeData() throws {
        var node = bornNode()
        let base = Self.catalog.aliasBase(ofDevice: 0)
        let actions = node.handle(
            .message(topic: "spBv1.0/plant/DCMD/imu-7/accelerometer", payload: command([(nil, base + 2, .double(10))]))
        )
        #expect(!actions.contains { if case .write = $0 { true } else { false } })
        let data = try SparkplugPayload(serializedBytes: try #require(published(actions, .nodeData).first).body)
        #expect(nodeValue(data, "Commands/Refused")?.longValue == 1)
        #expect(nodeValue(data, "Commands/Last Refusal")?.stringValue.contains("writes are off") == true)
        #expect(data.metrics.allSatisfy { !$0.hasName }, "node data by alias only")
        #expect(node.commandsRefused == 1)
    }

    @Test func allowedWritesGoToTheAgentAndTheirOutcomeIsCounted() throws {
        var node = bornNode(writes: .allowed)
        let base = Self.catalog.aliasBase(ofDevice: 0)
        let actions = node.handle(
            .message(
                topic: "spBv1.0/plant/DCMD/imu-7/accelerometer",
                payload: command([(nil, base + 2, .double(10)), ("config/enabled", nil, .boolean(false))])
            )
        )
        let rate = SparkplugWrite(deviceID: "accelerometer", metricName: "config/rateHz", value: .double(10))
        let enabled = SparkplugWrite(deviceID: "accelerometer", metricName: "config/enabled", value: .boolean(false))
        #expect(actions == [.write(rate), .write(enabled)])
        let applied = node.handle(.writeOutcome(rate, refusal: nil))
        #expect(
            nodeValue(try SparkplugPayload(serializedBytes: published(applied, .nodeData)[0].body), "Commands/Applied")?
                .longValue == 1
        )
        let refused = node.handle(.writeOutcome(enabled, refusal: "stream accelerometer is pinned by a command"))
        let data = try SparkplugPayload(serializedBytes: published(refused, .nodeData)[0].body)
        #expect(nodeValue(data, "Commands/Last Refusal")?.stringValue.hasSuffix("pinned by a command") == true)
    }

    @Test(arguments: [
        (
            "spBv1.0/plant/DCMD/imu-7/accelerometer",
            [("acceleration/x", nil, SparkplugMetricValue.float(1))] as [(String?, UInt64?, SparkplugMetricValue)],
            "read-only"
        ),
        ("spBv1.0/plant/DCMD/imu-7/accelerometer", [("config/rateHz", nil, .boolean(true))], "needs a Double value"),
        ("spBv1.0/plant/DCMD/imu-7/accelerometer", [(nil, 9999, .double(1))], "not in this birth"),
        ("spBv1.0/plant/DCMD/imu-7/barometer", [("config/rateHz", nil, .double(1))], "no such device"),
        ("spBv1.0/plant/DCMD/imu-7/accelerometer", [("config/rateHz", nil, .double(.nan))], "needs a Double value"),
        ("spBv1.0/plant/NCMD/imu-7", [("bdSeq", nil, .int64(3))], "read-only"),
    ])
    func badWritesAreRefusedNamingWhy(
        _ topic: String,
        _ metrics: [(String?, UInt64?, SparkplugMetricValue)],
        _ reason: String
    ) throws {
        var node = bornNode(writes: .allowed)
        let actions = node.handle(.message(topic: topic, payload: command(metrics.map { ($0.0, $0.1, $0.2) })))
        #expect(!actions.contains { if case .write = $0 { true } else { false } })
        let data = try SparkplugPayload(serializedBytes: try #require(published(actions, .nodeData).first).body)
        let refusal = try #require(nodeValue(data, "Commands/Last Refusal")?.stringValue)
        #expect(refusal.contains(reason), "\(refusal)")
    }

    @Test func aCommandThatIsNotProtobufIsRefusedAndTheNodeStaysBorn() {
        var node = bornNode(writes: .allowed)
        for garbage in [[0xFF, 0xFF, 0xFF], Array(repeating: 0x12, count: 10), Array(repeating: 0, count: 20_000)]
            as [[UInt8]]
        {
            _ = node.handle(.message(topic: "spBv1.0/plant/NCMD/imu-7", payload: garbage))
        }
        #expect(node.commandsRefused >= 2 && node.phase == .born)
    }

    @Test func nextServerIsAWriteTheOperatorMustAllow() {
        var refusing = bornNode()
        let request = Node.Event.message(
            topic: "spBv1.0/plant/NCMD/imu-7",
            payload: command([("Node Control/Next Server", nil, .boolean(true))])
        )
        #expect(!refusing.handle(request).contains(.disconnect(moveToNextServer: true)))
        var allowing = bornNode(writes: .allowed)
        #expect(allowing.handle(request).last == .disconnect(moveToNextServer: true))
    }
}

struct Failure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// Hostile input in bulk: random bytes and mutations of valid commands on every topic the node listens to. The
/// node must neither crash nor leave its session, and every command it could not read is counted as refused.
@Suite struct EdgeNodeHostileInputTests {
    private struct Generator: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return state
        }
    }

    @Test func randomAndMutatedPayloadsNeverEndTheSession() throws {
        var node = SparkplugEdgeNode<SteppedClock>(
            configuration: try .init(groupID: "plant", edgeNodeID: "imu-7", primaryHostID: "scada", writes: .allowed),
            catalog: try MotionSparkplug.catalog(streams: MotionSparkplug.streams),
            lastBirthDeathSequence: nil,
            clock: SteppedClock(),
            wallClockMs: { 1_795_241_134_057 }
        )
        _ = node.handle(.connecting(server: 0))
        _ = node.handle(.connected)
        _ = node.handle(.message(topic: "spBv1.0/STATE/scada", payload: Array(#"{"online":true,"timestamp":5}"#.utf8)))
        #expect(node.phase == .born)
        var valid = SparkplugPayload()
        valid.timestamp = 1
        var metric = SparkplugPayload.Metric()
        metric.name = "config/rateHz"
        metric.doubleValue = 10
        valid.metrics = [metric]
        let template: [UInt8] = try valid.serializedBytes()
        var random = Generator(state: 42)
        let topics = [
            "spBv1.0/plant/NCMD/imu-7", "spBv1.0/plant/DCMD/imu-7/accelerometer",
            "spBv1.0/plant/DCMD/imu-7/device-motion",
        ]
        for round in 0..<6_000 {
            var payload: [UInt8]
            if round % 2 == 0 {
                payload = (0..<Int.random(in: 0..<64, using: &random)).map { _ in
                    UInt8.random(in: 0...255, using: &random)
                }
            } else {
                payload = template
                for _ in 0..<Int.random(in: 1...4, using: &random) {
                    payload[Int.random(in: 0..<payload.count, using: &random)] = UInt8.random(
                        in: 0...255,
                        using: &random
                    )
                }
            }
            for action in node.handle(.message(topic: topics[round % topics.count], payload: payload)) {
                if case .write(let write) = action {
                    // Whatever got through is a well-formed write of a writable setting.
                    #expect(write.metricName.hasPrefix("config/"), "\(write)")
                    _ = node.handle(.writeOutcome(write, refusal: nil))
                }
            }
            if round % 10 == 0 {
                // STATE noise never older than the accepted one, never offline: the node must stay born.
                let noise = (0..<Int.random(in: 0..<40, using: &random)).map { _ in
                    UInt8.random(in: 0...255, using: &random)
                }
                _ = node.handle(.message(topic: "spBv1.0/STATE/scada", payload: noise))
            }
        }
        #expect(node.phase == .born)
        #expect(node.commandsRefused > 1_000)
    }
}
