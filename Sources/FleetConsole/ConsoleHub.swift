import AgentConfig
import AgentControl
import AgentPorts
import FleetOperations
import Foundation
import Logging
import MotionWire
import Synchronization

/// The console's running state between the broker and the pages: the fleet board fed by one subscription per
/// broker node, one subscription per watched device (its streams), and every open page (a WebSocket session).
/// A timer task sends each page what changed: device streams every 50 ms, fleet rows every 100 ms.
package final class ConsoleHub: Sendable {
    /// One open page.
    struct Session: Sendable {
        let output: AsyncStream<String>.Continuation
        var watching: String?
        let canChange: Bool
    }

    /// A watched device's subscription and what it heard.
    struct Watch: Sendable {
        var live: DeviceLive
        let client: any BrokerClient
        /// When the last page stopped watching (monotonic s), or nil while one watches.
        var unwatchedSince: Double?
        var detailDirty = true
        /// The row as last seen, to tell its changes as events (online, offline, versions applied, refusals).
        var lastRow: ConsoleDeviceRow?
    }

    struct State: Sendable {
        var board: FleetBoard
        var sessions: [Int: Session] = [:]
        var nextSession = 0
        var watches: [String: Watch] = [:]
        var dirtyRows: Set<String> = []
        var documentsDirty = false
        /// Node index → connected.
        var connected: [Int: Bool] = [:]
        var connectionDirty = false
        /// Runtime keys the devices report (`{root}/configuration`), offered by the page's edit form.
        var keys: Set<String> = []
    }

    let state: Mutex<State>
    let broker: ConsoleBroker
    let signingKey: OperatorSigningKey?
    let verificationKeys: OperatorKeys?
    let logger: Logger
    private let start = ContinuousClock.now

    /// Devices stop being watched this long after the last page left them, seconds.
    static let unwatchGrace = 5.0

    package init(
        broker: ConsoleBroker,
        fleetTopic: String = TopicScheme.fleetDesired,
        signingKey: OperatorSigningKey?,
        trustedKeys: TrustedKeyFile?,
        logger: Logger
    ) throws {
        self.broker = broker
        self.signingKey = signingKey
        verificationKeys = try DesiredEditPlanner.verificationKeys(signing: signingKey, trusted: trustedKeys)
        self.logger = logger
        state = Mutex(State(board: FleetBoard(root: broker.root, fleetTopic: fleetTopic)))
    }

    /// Monotonic seconds since the hub started.
    func now() -> Double {
        let (s, atto) = (ContinuousClock.now - start).components
        return Double(s) + Double(atto) / 1e18
    }

    // MARK: - From the broker

    /// A message of node `node`'s fleet subscription.
    func receive(_ message: InboundMessage, node: Int) {
        state.withLock { state in
            switch state.board.receive(topic: message.topic, payload: message.payload, node: node) {
            case .none: break
            case .device(let device):
                state.dirtyRows.insert(device)
                if state.watches[device] != nil {
                    state.watches[device]!.detailDirty = true
                    Self.noteChanges(of: device, in: &state)
                }
                if FleetDeviceStatus.device(of: message.topic, root: broker.root, \.configuration) == device,
                    let settings = state.board.detail(of: device)?.configuration?.settings
                {
                    state.keys.formUnion(settings.keys)
                }
            case .document(let topic):
                state.documentsDirty = true
                for device in state.board.devices(concernedBy: topic) {
                    state.dirtyRows.insert(device)
                    if state.watches[device] != nil { state.watches[device]!.detailDirty = true }
                }
            }
        }
    }

    /// A watched device's row changes as events for its view: online and offline, versions applied, refusals.
    static func noteChanges(of device: String, in state: inout State) {
        guard let row = state.board.row(of: device), row.seen, var watch = state.watches[device] else { return }
        let time = row.since
        if let last = watch.lastRow {
            if last.online != row.online || last.bootCount != row.bootCount {
                watch.live.event(time, "status", row.online ? "online (boot \(row.bootCount ?? 0))" : "offline")
            }
            for (layer, version) in row.desired.sorted(by: { $0.key < $1.key }) where last.desired[layer] != version {
                watch.live.event(time, "desired", "applied \(layer) v\(version)")
            }
            if let refused = row.refused, refused != last.refused {
                watch.live.event(time, "refused", refused)
            }
        }
        watch.lastRow = row
        state.watches[device] = watch
    }

    func connection(node: Int, up: Bool) {
        state.withLock {
            $0.connected[node] = up
            $0.connectionDirty = true
        }
    }

    /// A message of a watched device's own subscription.
    func receiveLive(_ message: InboundMessage, device: String) {
        let t = now()
        state.withLock { state in
            _ = state.watches[device]?.live.receive(topic: message.topic, payload: message.payload, now: t)
        }
    }

    // MARK: - Pages

    /// Registers a page; returns its id and the stream of messages to send it.
    func open(canChange: Bool) -> (Int, AsyncStream<String>) {
        // A page that does not read its socket loses the oldest frames, not the console's memory.
        let (stream, output) = AsyncStream<String>.makeStream(bufferingPolicy: .bufferingNewest(256))
        let id = state.withLock { state in
            let id = state.nextSession
            state.nextSession += 1
            state.sessions[id] = Session(output: output, watching: nil, canChange: canChange)
            output.yield(Self.hello(state, canChange: canChange, signing: signingKey != nil))
            return id
        }
        return (id, stream)
    }

    func close(_ id: Int) {
        let t = now()
        state.withLock { state in
            guard let session = state.sessions.removeValue(forKey: id) else { return }
            session.output.finish()
            if let device = session.watching { Self.release(device, in: &state, now: t) }
        }
    }

    /// A page's request: `{"watch": "device"}` or `{"watch": null}`.
    func request(_ text: String, from id: Int) {
        guard let data = text.data(using: .utf8), data.count <= 4096,
            let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any], object.keys.contains("watch")
        else { return }
        let device = object["watch"] as? String
        if let device, TopicScheme.levelProblem(device) != nil { return }
        watch(device, session: id)
    }

    func watch(_ device: String?, session id: Int) {
        let t = now()
        var subscribe: (String, any BrokerClient)?
        state.withLock { state in
            guard let session = state.sessions[id], session.watching != device else { return }
            if let old = session.watching { Self.release(old, in: &state, now: t) }
            state.sessions[id]!.watching = device
            guard let device else { return }
            if state.watches[device] == nil {
                let client = broker.makeClient()
                state.watches[device] = Watch(live: DeviceLive(device: device, root: broker.root), client: client)
                subscribe = (device, client)
            }
            state.watches[device]!.unwatchedSince = nil
            state.watches[device]!.detailDirty = true
            if state.watches[device]!.lastRow == nil { state.watches[device]!.lastRow = state.board.row(of: device) }
            session.output.yield(state.watches[device]!.live.snapshot())
        }
        if let (device, client) = subscribe {
            broker.follow(device: device, with: client, hub: self)
        }
    }

    /// Whether `device` is watched with `client` still (its watch did not end).
    func follows(_ device: String, with client: any BrokerClient) -> Bool {
        state.withLock { $0.watches[device]?.client === client }
    }

    private static func release(_ device: String, in state: inout State, now: Double) {
        let watched = state.sessions.values.contains { $0.watching == device }
        if !watched { state.watches[device]?.unwatchedSince = now }
    }

    // MARK: - The timer

    /// Sends each page what changed; stops watching devices nobody watches. Runs until cancelled.
    func run() async {
        var tick = 0
        while !Task.isCancelled {
            try? await Task.sleep(for: .milliseconds(50))
            tick += 1
            flush(rows: tick % 2 == 0, rates: tick % 20 == 0)
        }
    }

    func flush(rows: Bool, rates: Bool) {
        let t = now()
        var ended: [any BrokerClient] = []
        state.withLock { state in
            for (device, watch) in state.watches {
                if let since = watch.unwatchedSince, t - since > Self.unwatchGrace {
                    ended.append(watch.client)
                    state.watches[device] = nil
                    continue
                }
                let viewers = state.sessions.values.filter { $0.watching == device }
                if watch.detailDirty, let detail = state.board.detail(of: device) {
                    let text = "{\"type\":\"detail\",\"detail\":\(ConsoleJSON.encode(detail))}"
                    for viewer in viewers { viewer.output.yield(text) }
                    state.watches[device]!.detailDirty = false
                }
                if let frame = state.watches[device]!.live.frame(now: t, withRates: rates) {
                    for viewer in viewers { viewer.output.yield(frame) }
                }
            }
            guard rows, !state.sessions.isEmpty || !state.dirtyRows.isEmpty else { return }
            var messages: [String] = []
            if !state.dirtyRows.isEmpty {
                let rows = state.dirtyRows.sorted().compactMap { state.board.row(of: $0) }
                messages.append("{\"type\":\"rows\",\"rows\":\(ConsoleJSON.encode(rows))}")
                state.dirtyRows.removeAll(keepingCapacity: true)
            }
            if state.documentsDirty {
                messages.append(
                    "{\"type\":\"documents\",\"documents\":\(ConsoleJSON.encode(state.board.documentSummaries)),\"keys\":\(ConsoleJSON.encode(state.keys.sorted()))}"
                )
                state.documentsDirty = false
            }
            if state.connectionDirty {
                messages.append(Self.connectionMessage(state, broker: broker))
                state.connectionDirty = false
            }
            for session in state.sessions.values {
                for message in messages { session.output.yield(message) }
            }
        }
        for client in ended { Task { await client.disconnect(flushTimeout: 0.2) } }
    }

    static func hello(_ state: State, canChange: Bool, signing: Bool) -> String {
        let rows = state.board.deviceIDs.compactMap { state.board.row(of: $0) }
        return
            "{\"type\":\"hello\",\"canChange\":\(canChange),\"signing\":\(signing),\"rows\":\(ConsoleJSON.encode(rows)),"
            + "\"documents\":\(ConsoleJSON.encode(state.board.documentSummaries)),\"keys\":\(ConsoleJSON.encode(state.keys.sorted()))}"
    }

    static func connectionMessage(_ state: State, broker: ConsoleBroker) -> String {
        let nodes = broker.nodes.enumerated().map { index, node in
            ["node": node, "connected": state.connected[index] == true ? "true" : "false"]
        }
        return "{\"type\":\"connection\",\"nodes\":\(ConsoleJSON.encode(nodes))}"
    }

    // MARK: - Edits

    /// What the page asks to change: one layer's document.
    package struct EditRequest: Decodable, Sendable {
        /// `fleet`, `group`, `device`.
        package var layer: String
        /// The group's or device's name.
        package var name: String?
        package var set: [String: String]?
        package var unset: [String]?
        package var clear: Bool?
    }

    /// What was published.
    package struct EditResult: Encodable, Sendable {
        package var topic: String
        package var layer: String
        package var version: Int
        package var signed: Bool
        package var document: String
        /// The devices in the layer's scope now (a group's members, as their statuses say).
        package var devices: [String]
    }

    /// Publishes the next version of the layer's document to every node (retained, QoS 1), built and signed as
    /// `fleet set|unset|clear` build them (`DesiredEditPlanner`).
    func edit(_ request: EditRequest) throws(DesiredEditError) -> EditResult {
        let layer: ConfigurationLayer
        let topic: String
        switch request.layer {
        case "fleet":
            layer = .fleet
            topic = state.withLock { $0.board.fleetTopic }
        case "group", "device":
            guard let name = request.name, !name.isEmpty else {
                throw DesiredEditError("name the \(request.layer) whose document to change")
            }
            if let problem = TopicScheme.levelProblem(name) {
                throw DesiredEditError("the \(request.layer) name \(Printable.text(name, limit: 64)) \(problem)")
            }
            layer = request.layer == "group" ? .group(name) : .device
            topic =
                request.layer == "group"
                ? TopicScheme.groupDesired(name) : TopicScheme(template: broker.root, device: name).desired
        default:
            throw DesiredEditError("layer must be fleet, group or device")
        }
        let change: DesiredEditPlanner.Change
        if request.clear == true {
            change = .clear
        } else {
            let set = request.set ?? [:]
            let unset = request.unset ?? []
            guard !set.isEmpty || !unset.isEmpty else { throw DesiredEditError("nothing to set or unset") }
            change = .set(set, unset: unset)
        }
        let opener = DesiredDocumentOpener(keys: verificationKeys)
        let (edit, devices) = try state.withLock { state throws(DesiredEditError) in
            var retained: DesiredDocument?
            var unreadable: [String: String] = [:]
            for (node, payload) in state.board.retainedPayloads(on: topic) where !payload.isEmpty {
                switch opener.open(payload, layer: layer, topic: topic) {
                case .success(let document):
                    if document.version > (retained?.version ?? Int.min) { retained = document }
                case .failure(let refusal):
                    unreadable[broker.nodes[node]] = refusal.reason
                }
            }
            let devices = state.board.devices(concernedBy: topic)
            var reported: [String: Int] = [:]
            for device in devices {
                if let version = state.board.status(of: device)?.desired["\(layer)"] { reported[device] = version }
            }
            let planner = DesiredEditPlanner(layer: layer, topic: topic, signingKey: signingKey)
            let edit = try planner.plan(change, retained: retained, unreadable: unreadable, reported: reported)
            return (edit, devices)
        }
        do {
            try broker.publish(topic: topic, payload: edit.payload)
        } catch {
            throw DesiredEditError("publishing on \(topic) failed: \(error) — check the broker connection")
        }
        logger.notice(
            "published a desired document",
            metadata: ["console.topic": "\(Printable.text(topic))", "console.version": "\(edit.document.version)"]
        )
        return EditResult(
            topic: topic,
            layer: "\(layer)",
            version: edit.document.version,
            signed: signingKey != nil,
            document: String(decoding: edit.document.encoded(), as: UTF8.self),
            devices: devices
        )
    }
}
