import Logging

/// The Sparkplug B 3.0 edge node's decisions, and nothing else: which message follows each connection event,
/// inbound message and device change. It does no I/O and never sleeps: it reads the injected clocks and returns
/// actions, which its driver performs in order (the style of the agent's `ConnectionSupervisor`), so tests
/// drive it event by event.
///
/// What it keeps (docs/sparkplug.md, "Session"):
/// - bdSeq: one more per CONNECT (255 → 0), persisted before the CONNECT that carries it, so an NDEATH the
///   broker publishes for a killed agent matches the NBIRTH before it and the restarted agent's next NBIRTH
///   does not reuse it. The will is that NDEATH (QoS 1, not retained).
/// - Birth: after CONNACK, subscriptions to NCMD, DCMD and (with a primary host) its STATE, then NBIRTH and a
///   DBIRTH per available device as one sequence — at once, or with a primary host only once its STATE says
///   online.
/// - Primary host: a STATE older than the last one seen on this server is stale and ignored; an offline STATE
///   (not the replay of one already acted on) ends the session — NDEATH, DISCONNECT, next server. The retained
///   offline STATE found again on return does not walk again: the node waits there for the host.
/// - Rebirth (`Node Control/Rebirth` = true): NBIRTH with the same bdSeq and every DBIRTH again, at most one
///   per `rebirthInterval` (later requests coalesce into one at the interval's end).
/// - Commands: NCMD/DCMD metrics resolved by alias or name; writes only to writable metrics and only when the
///   operator allows them, else refused — counted and explained in the node metrics `Commands/…`, since
///   Sparkplug has no reply.
package struct SparkplugEdgeNode<C: Clock>: Sendable where C.Duration == Duration {
    package enum WritePolicy: Sendable, Equatable {
        case allowed
        /// Every NCMD/DCMD write but the rebirth request is refused, with this reason (e.g. "writes are off
        /// (sparkplug.writes: false)").
        case refused(reason: String)
    }

    package struct Configuration: Sendable, Equatable {
        package var groupID: String
        package var edgeNodeID: String
        package var primaryHostID: String?
        package var writes: WritePolicy
        package var rebirthInterval: Duration

        package init(
            groupID: String,
            edgeNodeID: String,
            primaryHostID: String? = nil,
            writes: WritePolicy = .refused(reason: "writes are off"),
            rebirthInterval: Duration = .seconds(1)
        ) throws(SparkplugError) {
            try SparkplugIdentifier.validate(groupID, role: "sparkplug.group_id")
            try SparkplugIdentifier.validate(edgeNodeID, role: "the Sparkplug edge node id (device.id)")
            if let primaryHostID { try SparkplugIdentifier.validate(primaryHostID, role: "sparkplug.primary_host_id") }
            self.groupID = groupID
            self.edgeNodeID = edgeNodeID
            self.primaryHostID = primaryHostID
            self.writes = writes
            self.rebirthInterval = rebirthInterval
        }
    }

    package enum Event: Sendable, Equatable {
        /// A CONNECT to `mqtt.servers[server]` is about to be sent: the will must be set now.
        case connecting(server: Int)
        /// CONNACK.
        case connected
        /// The connection ended, lost or closed.
        case disconnected
        /// A message on one of the node's subscriptions (NCMD, DCMD, the primary host's STATE). Hostile.
        case message(topic: String, payload: [UInt8])
        /// A device's sensor went away or came back.
        case device(id: String, available: Bool)
        /// New values of the node's own metrics (beyond bdSeq, controls and command counters).
        case nodeMetrics([String: SparkplugMetricValue])
        /// What became of a `.write` the node handed over: applied (nil) or refused with the reason.
        case writeOutcome(SparkplugWrite, refusal: String?)
        /// A `wait` deadline may have passed (early ticks are ignored).
        case tick
        /// The agent stops: say goodbye (NDEATH) and disconnect.
        case shutdown
    }

    package enum Action: Sendable, Equatable {
        /// Store the bdSeq the next CONNECT carries, before sending it.
        case persistBirthDeathSequence(UInt8)
        /// Register the NDEATH as the MQTT will of the next CONNECT (QoS 1, not retained).
        case setWill(SparkplugMessage)
        /// Subscribe at QoS 1.
        case subscribe(topic: String)
        /// NBIRTH, then the DBIRTH of each device in order (current values from the driver), with no other
        /// message of the node between them.
        case publishBirthSequence(nodeBirth: SparkplugMessage, deviceIDs: [String])
        /// One device's DBIRTH (a device that came back while the node is born).
        case publishDeviceBirth(deviceID: String)
        /// NDATA, DDEATH or NDEATH, QoS 0, not retained, stamped in order with the rest.
        case publish(SparkplugMessage)
        /// Whether DDATA may be published now: from the first birth of a session until the session ends.
        /// While false the driver holds data (store and forward) and sends it `is_historical` afterwards.
        case setDataFlowing(Bool)
        /// A host's write the node accepted: apply it through the agent's control door, then report
        /// `.writeOutcome`.
        case write(SparkplugWrite)
        /// DISCONNECT (after the NDEATH before it); with `moveToNextServer`, the next attempt goes to the next
        /// server in the list.
        case disconnect(moveToNextServer: Bool)
        /// Send `.tick` at (or after) this instant.
        case wait(until: C.Instant)
        case log(Logger.Level, String)
    }

    package enum Phase: Sendable, Equatable {
        case idle
        case connecting
        /// Connected, subscribed, waiting for the primary host's online STATE before the birth.
        case awaitingPrimaryHost
        case born
        /// An NDEATH and a DISCONNECT were sent; what arrives before the connection ends is ignored.
        case leaving
        case stopped
    }

    package let configuration: Configuration
    package let catalog: SparkplugCatalog
    package private(set) var phase = Phase.idle
    /// The server the current or next connection goes to.
    package private(set) var server = 0
    /// The bdSeq of the current connection; nil before the first.
    package private(set) var birthDeathSequence: UInt8?
    private var nextBirthDeathSequence: UInt8
    /// Per server: the last STATE of the primary host accepted there.
    private var hostStates: [Int: SparkplugHostState] = [:]
    private var deviceAvailable: [Bool]
    private var nodeValues: [SparkplugMetricValue]
    private var nodeTimestamps: [UInt64]
    package private(set) var commandsApplied: UInt64 = 0
    package private(set) var commandsRefused: UInt64 = 0
    private var lastRebirth: C.Instant?
    private var rebirthPending = false
    private let clock: C
    private let wallClockMs: @Sendable () -> UInt64

    /// - Parameters:
    ///   - lastBirthDeathSequence: the bdSeq the previous run persisted; nil on a first start (the first CONNECT
    ///     then carries 0).
    ///   - nodeValues: initial values of the catalog's node metrics beyond the standard ones, by name.
    ///   - wallClockMs: milliseconds since the Unix epoch, UTC, for payload and metric timestamps.
    package init(
        configuration: Configuration,
        catalog: SparkplugCatalog,
        lastBirthDeathSequence: UInt8?,
        nodeValues: [String: SparkplugMetricValue] = [:],
        clock: C,
        wallClockMs: @escaping @Sendable () -> UInt64
    ) {
        self.configuration = configuration
        self.catalog = catalog
        self.clock = clock
        self.wallClockMs = wallClockMs
        nextBirthDeathSequence = lastBirthDeathSequence.map { $0 &+ 1 } ?? 0
        deviceAvailable = Array(repeating: true, count: catalog.devices.count)
        let now = wallClockMs()
        var values = catalog.nodeMetrics.map { definition -> SparkplugMetricValue in
            switch definition.dataType {
            case .boolean: .boolean(false)
            case .uint64: .uint64(0)
            case .int64: .int64(0)
            case .string: .string("")
            default: .null
            }
        }
        for (name, value) in nodeValues {
            if let index = catalog.nodeMetricIndex(named: name) { values[index] = value }
        }
        self.nodeValues = values
        nodeTimestamps = Array(repeating: now, count: catalog.nodeMetrics.count)
    }

    // MARK: Topics

    package func topic(_ type: SparkplugMessageType, device: String? = nil) -> SparkplugTopic {
        SparkplugTopic(
            groupID: configuration.groupID,
            messageType: type,
            edgeNodeID: configuration.edgeNodeID,
            deviceID: device
        )
    }

    /// The DCMD subscription covers every device of the node.
    package var deviceCommandFilter: String {
        "\(SparkplugTopic.namespace)/\(configuration.groupID)/DCMD/\(configuration.edgeNodeID)/+"
    }

    package var primaryHostStateTopic: SparkplugStateTopic? {
        configuration.primaryHostID.map(SparkplugStateTopic.init(hostID:))
    }

    /// Whether the device is present (its DBIRTH belongs in the next birth sequence).
    package func isDeviceAvailable(_ id: String) -> Bool {
        catalog.deviceIndex(of: id).map { deviceAvailable[$0] } ?? false
    }

    // MARK: Events

    package mutating func handle(_ event: Event) -> [Action] {
        if phase == .stopped { return [] }
        switch event {
        case .connecting(let server):
            return connecting(server)
        case .connected:
            return connected()
        case .disconnected:
            let wasBorn = phase == .born
            phase = .idle
            rebirthPending = false
            return wasBorn
                ? [.setDataFlowing(false), .log(.info, "Sparkplug session ended: data is held until the next birth")]
                : []
        case .message(let topic, let payload):
            guard phase == .awaitingPrimaryHost || phase == .born else { return [] }
            return message(topic: topic, payload: payload)
        case .device(let id, let available):
            return device(id, available: available)
        case .nodeMetrics(let changes):
            var changed: [Int] = []
            let now = wallClockMs()
            for (name, value) in changes {
                guard let index = catalog.nodeMetricIndex(named: name), nodeValues[index] != value else { continue }
                nodeValues[index] = value
                nodeTimestamps[index] = now
                changed.append(index)
            }
            return nodeData(changed.sorted())
        case .writeOutcome(let write, let refusal):
            guard let refusal else {
                commandsApplied += 1
                // Counted before `nodeData` reads the values (a call evaluates its receiver before its arguments).
                let changed = setCounters()
                return [.log(.info, "applied the Sparkplug write of \(describe(write))")] + nodeData(changed)
            }
            return refuse("\(describe(write)): \(refusal)")
        case .tick:
            guard rebirthPending, phase == .born, let last = lastRebirth,
                clock.now >= last.advanced(by: configuration.rebirthInterval)
            else { return [] }
            rebirthPending = false
            return [.log(.info, "rebirth (requested by a host)")] + births()
        case .shutdown:
            let connected = phase == .born || phase == .awaitingPrimaryHost
            phase = .stopped
            guard connected, let bdSeq = birthDeathSequence else { return [] }
            return [
                .setDataFlowing(false),
                .publish(SparkplugMessage(topic: topic(.nodeDeath), body: death(bdSeq))),
                .disconnect(moveToNextServer: false),
            ]
        }
    }

    private mutating func connecting(_ server: Int) -> [Action] {
        phase = .connecting
        self.server = server
        rebirthPending = false
        let bdSeq = nextBirthDeathSequence
        nextBirthDeathSequence = bdSeq &+ 1
        birthDeathSequence = bdSeq
        if let index = catalog.nodeMetricIndex(named: SparkplugCatalog.NodeMetric.birthDeathSequence) {
            nodeValues[index] = .int64(Int64(bdSeq))
        }
        return [
            .persistBirthDeathSequence(bdSeq),
            .setWill(SparkplugMessage(topic: topic(.nodeDeath), body: death(bdSeq))),
        ]
    }

    private mutating func connected() -> [Action] {
        guard phase == .connecting else {
            return [.log(.warning, "Sparkplug: a CONNACK without a CONNECT before it is ignored")]
        }
        var actions: [Action] = [
            .subscribe(topic: topic(.nodeCommand).description),
            .subscribe(topic: deviceCommandFilter),
        ]
        if let state = primaryHostStateTopic {
            phase = .awaitingPrimaryHost
            actions.append(.subscribe(topic: state.description))
            actions.append(
                .log(
                    .info,
                    "Sparkplug: waiting for the primary host \(state.hostID) to be online (\(state)) before the birth"
                )
            )
            return actions
        }
        return actions + births() + [.setDataFlowing(true)]
    }

    private mutating func births() -> [Action] {
        let now = wallClockMs()
        for name in [SparkplugCatalog.NodeMetric.rebirth, SparkplugCatalog.NodeMetric.nextServer] {
            if let index = catalog.nodeMetricIndex(named: name) {
                nodeValues[index] = .boolean(false)
                nodeTimestamps[index] = now
            }
        }
        if let index = catalog.nodeMetricIndex(named: SparkplugCatalog.NodeMetric.birthDeathSequence) {
            nodeTimestamps[index] = now
        }
        _ = setCounters()
        phase = .born
        lastRebirth = clock.now
        let body = SparkplugBirthEncoder.nodeBirth(catalog: catalog, values: nodeValues, timestampsMs: nodeTimestamps)
        let devices = catalog.devices.indices.filter { deviceAvailable[$0] }.map { catalog.devices[$0].id }
        return [
            .publishBirthSequence(nodeBirth: SparkplugMessage(topic: topic(.nodeBirth), body: body), deviceIDs: devices)
        ]
    }

    private func death(_ bdSeq: UInt8) -> [UInt8] {
        SparkplugBirthEncoder.nodeDeath(birthDeathSequence: bdSeq, timestampMs: wallClockMs())
    }

    private mutating func device(_ id: String, available: Bool) -> [Action] {
        guard let index = catalog.deviceIndex(of: id) else {
            return [.log(.warning, "Sparkplug: no device \"\(id)\" in the catalog; its change is ignored")]
        }
        guard deviceAvailable[index] != available else { return [] }
        deviceAvailable[index] = available
        guard phase == .born else { return [] }
        if available {
            return [.log(.info, "Sparkplug device \(id) is back: DBIRTH"), .publishDeviceBirth(deviceID: id)]
        }
        return [
            .log(.warning, "Sparkplug device \(id) went away: DDEATH"),
            .publish(SparkplugMessage(topic: topic(.deviceDeath, device: id), body: SparkplugBirthEncoder.deviceDeath)),
        ]
    }

    // MARK: Inbound

    private mutating func message(topic raw: String, payload: [UInt8]) -> [Action] {
        if let state = SparkplugStateTopic(parsing: raw) {
            guard state.hostID == configuration.primaryHostID else { return [] }
            return hostState(payload)
        }
        guard let topic = SparkplugTopic(parsing: raw), topic.groupID == configuration.groupID,
            topic.edgeNodeID == configuration.edgeNodeID
        else { return [.log(.debug, "Sparkplug: ignored a message on \(raw)")] }
        switch topic.messageType {
        case .nodeCommand: return nodeCommand(payload)
        case .deviceCommand: return deviceCommand(topic.deviceID ?? "", payload)
        default: return []
        }
    }

    private mutating func hostState(_ payload: [UInt8]) -> [Action] {
        let host = configuration.primaryHostID ?? ""
        let state: SparkplugHostState
        do {
            state = try SparkplugHostState(parsing: payload)
        } catch {
            return [.log(.warning, "Sparkplug: ignored the primary host \(host)'s STATE: \(error)")]
        }
        let previous = hostStates[server]
        if let previous, state.timestampMs < previous.timestampMs {
            return [
                .log(
                    .info,
                    "Sparkplug: ignored a STATE of \(host) older (\(state.timestampMs)) than the last one seen "
                        + "(\(previous.timestampMs))"
                )
            ]
        }
        hostStates[server] = state
        if state.online {
            guard phase == .awaitingPrimaryHost else { return [] }
            return [.log(.info, "Sparkplug: the primary host \(host) is online: birth")] + births()
                + [.setDataFlowing(true)]
        }
        if phase == .awaitingPrimaryHost, previous == state {
            // The retained offline STATE of a departure already acted on: stay and wait for the host here.
            return [.log(.info, "Sparkplug: the primary host \(host) is still offline here: waiting for it")]
        }
        return leave("the primary host \(host) went offline")
    }

    /// NDEATH (when born), DISCONNECT, and the next server.
    private mutating func leave(_ reason: String) -> [Action] {
        let wasBorn = phase == .born
        phase = .leaving
        var actions: [Action] = [.log(.warning, "Sparkplug: \(reason): leaving this server for the next one")]
        if wasBorn, let bdSeq = birthDeathSequence {
            actions += [
                .setDataFlowing(false),
                .publish(SparkplugMessage(topic: topic(.nodeDeath), body: death(bdSeq))),
            ]
        }
        return actions + [.disconnect(moveToNextServer: true)]
    }

    private mutating func nodeCommand(_ payload: [UInt8]) -> [Action] {
        let command: SparkplugPayload
        do {
            command = try SparkplugCommandDecoder.decode(payload)
        } catch {
            return refuse("NCMD: \(error)")
        }
        var actions: [Action] = []
        let entries = SparkplugCommandDecoder.entries(
            of: command,
            definitions: catalog.nodeMetrics,
            aliasBase: 1,
            index: catalog.nodeMetricIndex(named:)
        )
        for entry in entries {
            switch entry {
            case .refused(let reason):
                actions += refuse("NCMD: \(reason)")
            case .write(let index, let value):
                let definition = catalog.nodeMetrics[index]
                switch definition.name {
                case SparkplugCatalog.NodeMetric.rebirth:
                    // The specification requires every edge node to honour it, whatever the write policy.
                    if value == .boolean(true) { actions += requestRebirth() }
                case SparkplugCatalog.NodeMetric.nextServer:
                    guard value == .boolean(true) else { continue }
                    if case .refused(let reason) = configuration.writes {
                        actions += refuse("NCMD \"\(definition.name)\": \(reason)")
                    } else {
                        commandsApplied += 1
                        return actions + leave("a host asked for the next server (Node Control/Next Server)")
                    }
                default:
                    actions += write(
                        SparkplugWrite(deviceID: nil, metricName: definition.name, value: value),
                        definition
                    )
                }
            }
        }
        return actions
    }

    private mutating func deviceCommand(_ deviceID: String, _ payload: [UInt8]) -> [Action] {
        guard let device = catalog.deviceIndex(of: deviceID) else {
            return refuse("DCMD for \"\(deviceID)\": the node has no such device")
        }
        let command: SparkplugPayload
        do {
            command = try SparkplugCommandDecoder.decode(payload)
        } catch {
            return refuse("DCMD for \(deviceID): \(error)")
        }
        let definitions = catalog.devices[device].metrics
        let entries = SparkplugCommandDecoder.entries(
            of: command,
            definitions: definitions,
            aliasBase: catalog.aliasBase(ofDevice: device)
        ) { catalog.deviceMetricIndex(device: device, named: $0) }
        var actions: [Action] = []
        for entry in entries {
            switch entry {
            case .refused(let reason):
                actions += refuse("DCMD for \(deviceID): \(reason)")
            case .write(let index, let value):
                let definition = definitions[index]
                actions += write(
                    SparkplugWrite(deviceID: deviceID, metricName: definition.name, value: value),
                    definition
                )
            }
        }
        return actions
    }

    private mutating func write(_ write: SparkplugWrite, _ definition: SparkplugMetricDefinition) -> [Action] {
        guard definition.isWritable else { return refuse("\(describe(write)): the metric is read-only") }
        if case .refused(let reason) = configuration.writes { return refuse("\(describe(write)): \(reason)") }
        return [.write(write)]
    }

    private mutating func requestRebirth() -> [Action] {
        guard phase == .born else { return [] }
        if let last = lastRebirth {
            let due = last.advanced(by: configuration.rebirthInterval)
            if clock.now < due {
                guard !rebirthPending else { return [] }
                rebirthPending = true
                return [.wait(until: due)]
            }
        }
        return [.log(.info, "rebirth (requested by a host)")] + births()
    }

    // MARK: Node metrics

    private mutating func refuse(_ reason: String) -> [Action] {
        commandsRefused += 1
        if let index = catalog.nodeMetricIndex(named: SparkplugCatalog.NodeMetric.lastRefusal) {
            nodeValues[index] = .string(reason)
            nodeTimestamps[index] = wallClockMs()
        }
        var changed = setCounters()
        if let index = catalog.nodeMetricIndex(named: SparkplugCatalog.NodeMetric.lastRefusal) { changed.append(index) }
        return [.log(.warning, "Sparkplug command refused — \(reason)")] + nodeData(changed)
    }

    /// Brings the counter metrics up to date; returns the indices whose value changed.
    private mutating func setCounters() -> [Int] {
        var changed: [Int] = []
        let now = wallClockMs()
        for (name, value) in [
            (SparkplugCatalog.NodeMetric.commandsApplied, commandsApplied),
            (SparkplugCatalog.NodeMetric.commandsRefused, commandsRefused),
        ] {
            guard let index = catalog.nodeMetricIndex(named: name), nodeValues[index] != .uint64(value) else {
                continue
            }
            nodeValues[index] = .uint64(value)
            nodeTimestamps[index] = now
            changed.append(index)
        }
        return changed
    }

    private func nodeData(_ indices: [Int]) -> [Action] {
        guard phase == .born, !indices.isEmpty else { return [] }
        var encoder = SparkplugDataEncoder(capacity: 256)
        for index in indices {
            encoder.append(
                alias: catalog.nodeAlias(index),
                timestampMs: nodeTimestamps[index],
                value: nodeValues[index]
            )
        }
        return [.publish(SparkplugMessage(topic: topic(.nodeData), body: encoder.bytes))]
    }

    private func describe(_ write: SparkplugWrite) -> String {
        "\(write.deviceID.map { "DCMD \($0)" } ?? "NCMD") \"\(write.metricName)\" = \(write.value)"
    }
}
