import AgentControl
import AgentPorts
import MemoryBroker
import MotionWire
import SparkplugB
import Synchronization

/// The fleet's operator, as `motion-agent fleet` and `ctl` act: desired documents numbered per layer and
/// published retained at QoS 1 on every broker (a failover pair keeps no state in common here, so each gets its
/// own copy, as `fleet set --server` repeated does), commands with a response topic and correlation data, signed
/// with the operator key when the fleet requires signatures. After every (re)connection it publishes each layer's
/// newest document again — what an operator does after a broker lost its retained store.
package final class SimulatedOperator: @unchecked Sendable {
    package typealias Layer = FaultSchedule.Layer

    /// The newest document of a layer, as published.
    package struct Published: Sendable {
        package var version: Int
        package var payload: [UInt8]
        /// Whether a device should apply it (well-formed and, on a signing fleet, signed by the operator).
        package var valid: Bool
        package var clear: Bool
    }

    private struct State {
        var versions: [Layer: Int] = [:]
        var newest: [Layer: Published] = [:]
        var history: [Layer: [[UInt8]]] = [:]
        var counter = 0
        var commandNumber = 0
        var commandsSent = 0
        /// The primary host's newest STATE (retained), and its last timestamp: a host's STATE timestamps only
        /// rise (Sparkplug 3.0: an edge node ignores an older one), whatever the world's wall clock does.
        var primaryHostState: [UInt8]?
        var primaryHostTimestamp: UInt64 = 0
    }

    let key: OperatorSigningKey?
    let impostor: OperatorSigningKey?
    private let state = Mutex(State())
    private var clients: [(broker: MemoryBroker, client: MemoryBrokerClient)] = []
    package static let clientID = "operator"
    package static let replyTopic = TopicScheme.operatorReply(clientID: clientID)

    init(key: OperatorSigningKey?, impostor: OperatorSigningKey?) {
        self.key = key
        self.impostor = impostor
    }

    /// Connects to every broker of `world` and keeps reconnecting, on the world's executor.
    func start(in world: SimulationWorld) {
        for broker in world.brokers {
            let client = broker.makeClient()
            clients.append((broker, client))
            let options = broker.connectOptions(clientID: Self.clientID)
            let clock = world.clock
            world.executor.run {
                Task(executorPreference: world.executor) { [self] in
                    try? client.connect(options)
                    for await event in client.events {
                        switch event {
                        case .connected: republish(on: client)
                        case .disconnected, .connectFailed:
                            try? await clock.sleep(seconds: 1)
                            try? client.connect(options)
                        case .message, .serverReference: break
                        }
                    }
                }
            }
        }
    }

    package static func topic(_ layer: Layer) -> String {
        switch layer {
        case .fleet: "motion/fleet/desired"
        case .group(let name): TopicScheme.groupDesired(name)
        case .device(let id): TopicScheme(root: "motion/\(id)").desired
        }
    }

    package static func topic(_ target: FaultSchedule.Target) -> String {
        switch target {
        case .fleet: "motion/fleet/control"
        case .group(let name): TopicScheme.groupControl(name)
        case .device(let id): TopicScheme(root: "motion/\(id)").control
        }
    }

    /// The newest document published on each layer.
    package var newest: [Layer: Published] { state.withLock { $0.newest } }

    package var commandsSent: Int { state.withLock { $0.commandsSent } }

    /// Publishes the layer's next version: `settings` (JSON members without the version), or a clear.
    func publishDesired(
        _ layer: Layer,
        settings: String?,
        clear: Bool = false,
        valid: Bool,
        signing: FaultSchedule.Signing
    ) {
        let (payload, version) = state.withLock { state -> ([UInt8], Int) in
            let version = (state.versions[layer] ?? 0) + 1
            state.versions[layer] = version
            var body = "{\"version\": \(version)"
            if clear { body += ", \"clear\": true" }
            if let settings, !settings.isEmpty { body += ", " + settings }
            body += "}"
            let payload = seal(Array(body.utf8), layer: layer, signing: signing)
            state.newest[layer] = Published(version: version, payload: payload, valid: valid, clear: clear)
            state.history[layer, default: []].append(payload)
            return (payload, version)
        }
        _ = version
        publishRetained(Self.topic(layer), payload)
    }

    /// Sends an older document of the layer again (a replay, or a stale copy a broker kept).
    func replayOld(_ layer: Layer, pick: (Int) -> Int) {
        let old = state.withLock { state -> [UInt8]? in
            guard let history = state.history[layer], history.count >= 2 else { return nil }
            return history[pick(history.count - 1)]
        }
        guard let old else { return }
        // Not retained: the newest stays what the broker hands over; the replay reaches who listens now.
        for (_, client) in clients {
            _ = old.withUnsafeBytes {
                try? client.publish(topic: Self.topic(layer), payload: $0, qos: 1, retain: false)
            }
        }
    }

    /// Makes sure the newest document of every layer is one the devices apply: an operator fixes a refused one.
    func healDocuments() {
        let broken = state.withLock { state in state.newest.filter { !$0.value.valid }.map(\.key).sorted() }
        for layer in broken { publishDesired(layer, settings: nil, valid: true, signing: .signed) }
    }

    /// A command; returns its id.
    @discardableResult
    func command(_ target: FaultSchedule.Target, members: String, signing: FaultSchedule.Signing) -> String {
        let topic = Self.topic(target)
        let (id, payload) = state.withLock { state -> (String, [UInt8]) in
            state.commandNumber += 1
            state.commandsSent += 1
            let id = "c\(state.commandNumber)"
            let body = Array("{\"id\": \"\(id)\", \(members)}".utf8)
            return (id, sealCommand(body, topic: topic, signing: signing, state: &state))
        }
        for (_, client) in clients where client.isConnected {
            try? client.publishRequest(
                topic: topic,
                payload: payload,
                responseTopic: Self.replyTopic,
                correlationData: Array(id.utf8)
            )
        }
        return id
    }

    private func publishRetained(_ topic: String, _ payload: [UInt8]) {
        for (_, client) in clients {
            _ = payload.withUnsafeBytes { try? client.publish(topic: topic, payload: $0, qos: 1, retain: true) }
        }
    }

    /// The Sparkplug primary host the devices wait for (`sparkplug.primary_host_id`).
    package static let primaryHostID = "scada"
    package static let primaryHostTopic = "spBv1.0/STATE/\(primaryHostID)"

    /// The primary host says it is online or offline (retained, QoS 1), as a SCADA host does.
    func publishPrimaryHost(online: Bool, realtimeSeconds: Double) {
        let payload = state.withLock { state -> [UInt8] in
            state.primaryHostTimestamp = max(state.primaryHostTimestamp + 1, UInt64(max(0, realtimeSeconds * 1000)))
            let payload = SparkplugHostState(online: online, timestampMs: state.primaryHostTimestamp).payload
            state.primaryHostState = payload
            return payload
        }
        for (_, client) in clients {
            _ = payload.withUnsafeBytes {
                try? client.publish(topic: Self.primaryHostTopic, payload: $0, qos: 1, retain: true)
            }
        }
    }

    private func republish(on client: MemoryBrokerClient) {
        if let hostState = state.withLock({ $0.primaryHostState }) {
            _ = hostState.withUnsafeBytes {
                try? client.publish(topic: Self.primaryHostTopic, payload: $0, qos: 1, retain: true)
            }
        }
        let documents = state.withLock { state in state.newest.sorted { $0.key < $1.key } }
        for (layer, document) in documents {
            _ = document.payload.withUnsafeBytes {
                try? client.publish(topic: Self.topic(layer), payload: $0, qos: 1, retain: true)
            }
        }
    }

    private func seal(_ body: [UInt8], layer: Layer, signing: FaultSchedule.Signing) -> [UInt8] {
        guard let signer = signer(signing),
            case .object(let members)? = try? StrictJSON.parse(body, limits: .desiredDocument)
        else { return body }
        let layerName: String
        switch layer {
        case .fleet: layerName = "fleet"
        case .group(let name): layerName = "group \(name)"
        case .device: layerName = "device"
        }
        return SignedEnvelope.seal(
            [("target", .string(Self.topic(layer))), ("layer", .string(layerName))] + members,
            with: signer
        )
    }

    private func sealCommand(
        _ body: [UInt8],
        topic: String,
        signing: FaultSchedule.Signing,
        state: inout State
    ) -> [UInt8] {
        guard let signer = signer(signing),
            case .object(let members)? = try? StrictJSON.parse(body, limits: .command)
        else { return body }
        state.counter += 1
        return SignedEnvelope.seal(
            [("target", .string(topic)), ("counter", .number(String(state.counter)))] + members,
            with: signer
        )
    }

    private func signer(_ signing: FaultSchedule.Signing) -> OperatorSigningKey? {
        switch signing {
        case .signed: key
        case .unsigned: nil
        case .forged: impostor
        }
    }
}
