import AgentPorts
import Foundation
import Harness
import MosquittoTransport
import SparkplugB
import Synchronization

/// A small driver of `SparkplugEdgeNode` over a real MQTT connection (MosquittoClient), standing in for the
/// agent until the agent's own integration (docs/sparkplug.md, "Phase B"): it performs the state machine's
/// actions in order, stamps `seq` when a message is handed to MQTT (and only then), holds data while the node
/// is not born and replays it flagged historical after the next birth, applies writes to its devices' settings,
/// and persists bdSeq in a file.
final class SparkplugTestEdgeNode: Sendable {
    typealias Node = SparkplugEdgeNode<ContinuousClock>

    private struct State {
        var node: Node
        var writers: [SparkplugDeviceWriter]
        var sequence = SparkplugSequence()
        var flowing = false
        var connected = false
        var stopped = false
        var will: BrokerWill?
        var held: [(topic: String, body: [UInt8])] = []
        var out: [UInt8] = []
        var log: [String] = []
    }

    let broker: MosquittoBroker
    let client: MosquittoClient
    let clientID: String
    let bdSeqFile: String
    private let state: Mutex<State>
    private let catalog: SparkplugCatalog

    init(
        broker: MosquittoBroker,
        clientID: String = "edge-imu-7",
        primaryHostID: String? = nil,
        writes: Node.WritePolicy = .refused(reason: "writes are off (sparkplug.writes: false)"),
        bdSeqFile: String
    ) throws {
        self.broker = broker
        self.clientID = clientID
        self.bdSeqFile = bdSeqFile
        let catalog = try MotionSparkplug.catalog(streams: ["accelerometer", "device-motion", "activity"])
        self.catalog = catalog
        let last = (try? String(contentsOfFile: bdSeqFile, encoding: .utf8)).flatMap {
            UInt8($0.trimmingCharacters(in: .whitespacesAndNewlines))
        }
        let node = Node(
            configuration: try .init(
                groupID: "plant",
                edgeNodeID: "imu-7",
                primaryHostID: primaryHostID,
                writes: writes
            ),
            catalog: catalog,
            lastBirthDeathSequence: last,
            clock: ContinuousClock(),
            wallClockMs: { UInt64(Date().timeIntervalSince1970 * 1000) }
        )
        var writers = catalog.devices.indices.map { SparkplugDeviceWriter(catalog: catalog, device: $0) }
        let now = UInt64(Date().timeIntervalSince1970 * 1000)
        for (i, device) in catalog.devices.enumerated() {
            let data = device.metrics.count - MotionSparkplug.Config.allCases.count
            writers[i].record(enabled: true, rateHz: 50, effectiveRateHz: 50, dataCount: data, timeMs: now)
        }
        state = Mutex(State(node: node, writers: writers))
        client = MosquittoClient(logger: .init(label: "sparkplug-test"))
    }

    var log: [String] { state.withLock { $0.log } }
    var heldCount: Int { state.withLock { $0.held.count } }
    var isFlowing: Bool { state.withLock { $0.flowing } }

    // MARK: Connection

    func start() {
        Task { [self] in
            for await event in client.events {
                switch event {
                case .connected:
                    handle(.connected)
                case .message(let message):
                    handle(.message(topic: message.topic, payload: message.payload))
                case .disconnected, .connectFailed:
                    let stopped = state.withLock { state in
                        state.connected = false
                        return state.stopped
                    }
                    handle(.disconnected)
                    guard !stopped else { continue }
                    // A fixed back-off (the agent's is jittered and exponential): long enough for a host that
                    // lost the same broker to be back before the birth.
                    try? await Task.sleep(for: .seconds(1))
                    connect()
                case .serverReference:
                    continue
                }
            }
        }
        connect()
    }

    private func connect() {
        guard !state.withLock({ $0.stopped }) else { return }
        handle(.connecting(server: 0))
        let will = state.withLock { $0.will }
        // Sparkplug sessions are clean: Clean Start and a Session Expiry of 0 (3.0, 2.5).
        var options = broker.connectOptions(clientID: clientID, will: will)
        options.sessionExpirySeconds = 0
        do {
            try client.connect(options)
        } catch {
            state.withLock { $0.log.append("connect failed: \(error)") }
            Task { [self] in
                try? await Task.sleep(for: .seconds(1))
                connect()
            }
        }
    }

    func stop() async {
        handle(.shutdown)
        state.withLock { $0.stopped = true }
        await client.disconnect(flushTimeout: 2)
    }

    // MARK: Samples

    /// One sample of `stream`, recorded by `fill` into its device's slots: published as DDATA while the node is
    /// born, else held for the replay.
    func sample(_ stream: String, _ fill: (inout SparkplugDeviceWriter) -> Void) {
        state.withLock { state in
            guard let device = catalog.deviceIndex(of: stream) else { return }
            state.writers[device].reset()
            fill(&state.writers[device])
            guard state.writers[device].appendChanges() > 0 else { return }
            let topic = state.node.topic(.deviceData, device: stream).description
            let body = state.writers[device].body
            if state.flowing {
                publish(topic: topic, body: body, type: .deviceData, historical: false, state: &state)
            } else {
                state.held.append((topic, body))
            }
        }
    }

    // MARK: Actions

    private func handle(_ event: Node.Event) {
        let disconnect = state.withLock { state -> Bool? in
            var moveOn: Bool?
            for action in state.node.handle(event) {
                if let move = perform(action, state: &state) { moveOn = move }
            }
            return moveOn
        }
        if disconnect != nil {
            Task { [self] in await client.disconnect(flushTimeout: 1) }
        }
    }

    /// Performs one action; returns non-nil when the connection is to be closed.
    private func perform(_ action: Node.Action, state: inout State) -> Bool? {
        switch action {
        case .persistBirthDeathSequence(let bdSeq):
            try? "\(bdSeq)\n".write(toFile: bdSeqFile, atomically: true, encoding: .utf8)
        case .setWill(let message):
            state.will = BrokerWill(topic: message.topic.description, payload: message.body, qos: 1, retain: false)
        case .subscribe(let topic):
            state.connected = true
            try? client.subscribe([topic], qos: 1)
        case .publishBirthSequence(let birth, let devices):
            publish(
                topic: birth.topic.description,
                body: birth.body,
                type: .nodeBirth,
                historical: false,
                state: &state
            )
            for id in devices { deviceBirth(id, state: &state) }
        case .publishDeviceBirth(let id):
            deviceBirth(id, state: &state)
        case .publish(let message):
            publish(
                topic: message.topic.description,
                body: message.body,
                type: message.type,
                historical: false,
                state: &state
            )
        case .setDataFlowing(let flowing):
            state.flowing = flowing
            if flowing {
                // Store and forward: what was measured while the node was not born goes out now, historical.
                let held = state.held
                state.held.removeAll()
                for (topic, body) in held {
                    publish(topic: topic, body: body, type: .deviceData, historical: true, state: &state)
                }
            }
        case .write(let write):
            // The agent would pass this through its control door; the driver applies it to the device's settings.
            let refusal = apply(write, state: &state)
            for follow in state.node.handle(.writeOutcome(write, refusal: refusal)) {
                _ = perform(follow, state: &state)
            }
        case .disconnect(let moveToNextServer):
            state.flowing = false
            return moveToNextServer
        case .wait(let deadline):
            Task { [self] in
                try? await ContinuousClock().sleep(until: deadline)
                handle(.tick)
            }
        case .log(let level, let text):
            state.log.append("\(level): \(text)")
        }
        return nil
    }

    private func deviceBirth(_ id: String, state: inout State) {
        guard let device = catalog.deviceIndex(of: id) else { return }
        let body = state.writers[device].birth(catalog: catalog)
        publish(
            topic: state.node.topic(.deviceBirth, device: id).description,
            body: body,
            type: .deviceBirth,
            historical: false,
            state: &state
        )
    }

    private func apply(_ write: SparkplugWrite, state: inout State) -> String? {
        guard let id = write.deviceID, let device = catalog.deviceIndex(of: id),
            let index = catalog.deviceMetricIndex(device: device, named: write.metricName)
        else { return "no such setting" }
        if case .double(let rate) = write.value, !(rate > 0 && rate <= 1000) {
            return "rate_hz \(rate) is outside 0 < rate ≤ 1000"
        }
        let now = UInt64(Date().timeIntervalSince1970 * 1000)
        state.writers[device].reset()
        state.writers[device].set(index, write.value, timestampMs: now)
        if state.writers[device].appendChanges() > 0, state.flowing {
            let topic = state.node.topic(.deviceData, device: id).description
            publish(topic: topic, body: state.writers[device].body, type: .deviceData, historical: false, state: &state)
        }
        return nil
    }

    /// Stamps and hands one message to MQTT; the sequence advances only when the client took it, so a message
    /// that could not be sent leaves no gap.
    private func publish(
        topic: String,
        body: [UInt8],
        type: SparkplugMessageType,
        historical: Bool,
        state: inout State
    ) {
        var sequence = state.sequence
        let seq = sequence.next(for: type)
        do {
            try SparkplugStamp.finish(
                body: body,
                timestampMs: UInt64(Date().timeIntervalSince1970 * 1000),
                seq: seq,
                historical: historical,
                into: &state.out
            )
            _ = try state.out.withUnsafeBytes { bytes in
                try client.publish(topic: topic, payload: bytes, qos: type == .nodeDeath ? 1 : 0, retain: false)
            }
            state.sequence = sequence
        } catch {
            state.log.append("publish \(type.rawValue) failed: \(error)")
            if type == .deviceData { state.held.append((topic, body)) }
        }
    }
}
