import AgentConfig
import AgentPorts
import ArgumentParser
import FleetOperations
import Foundation
import MotionWire

/// What every node of the broker retains and hears, read over one connection per node (`--server`, repeated; or
/// `--host`/`--port`). On a cluster whose nodes keep retained messages apart (RabbitMQ) each node may hold a
/// different document or status on the same topic: the newest desired document is the one with the highest
/// version, a device's newest status the one with the highest boot count, then time. On one broker, or a cluster
/// that replicates its retained messages (NATS), every node holds the same.
final class FleetSnapshot: Sendable {
    let nodes: [RetainedSnapshot]

    private init(nodes: [RetainedSnapshot]) {
        self.nodes = nodes
    }

    /// Connects to every node at once; throws, naming each node that did not accept, when one did not (after
    /// closing the others): a desired document must reach every node or none.
    static func open(_ broker: BrokerOptions, reading: FleetReadOptions, timeout: Double) async throws -> FleetSnapshot
    {
        let endpoints = try broker.endpoints()
        let qos = reading.readQos
        let clientID = "motion-fleet-\(UUID().uuidString.prefix(8).lowercased())"
        // One client id per node: a cluster that tracks client ids across its nodes (RabbitMQ) closes the older
        // connection of an id that connects again elsewhere.
        let options = try endpoints.enumerated().map {
            try broker.connectOptions(clientID: "\(clientID)-\($0.offset)", to: $0.element)
        }
        let outcomes = await withTaskGroup(of: (Int, Result<RetainedSnapshot, Error>).self) { group in
            for (index, option) in options.enumerated() {
                group.addTask {
                    do {
                        return (
                            index, .success(try await RetainedSnapshot(options: option, timeout: timeout, qos: qos))
                        )
                    } catch {
                        return (index, .failure(error))
                    }
                }
            }
            var outcomes: [(Int, Result<RetainedSnapshot, Error>)] = []
            for await outcome in group { outcomes.append(outcome) }
            return outcomes.sorted { $0.0 < $1.0 }.map(\.1)
        }
        let failures = outcomes.compactMap { outcome -> String? in
            if case .failure(let error) = outcome { return "\(error)" }
            return nil
        }
        let nodes = outcomes.compactMap { try? $0.get() }
        guard failures.isEmpty else {
            for node in nodes { await node.close() }
            throw ValidationError(
                failures.joined(separator: "; ")
                    + (endpoints.count > 1
                        ? " — every --server must be reachable: start the node, or leave it out if it is gone for good"
                        : "")
            )
        }
        return FleetSnapshot(nodes: nodes)
    }

    /// Subscribes to `filters` on every node (or on `chosen`) and returns once each has handed over what it
    /// retains.
    func read(_ filters: [String], timeout: Double, on chosen: [RetainedSnapshot]? = nil) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            for node in chosen ?? nodes { group.addTask { try await node.read(filters, timeout: timeout) } }
            try await group.waitForAll()
        }
        let dropped = self.dropped
        if dropped > 0 {
            throw ValidationError(
                "\(dropped) messages were dropped while reading (this process fell behind): run the command again"
            )
        }
    }

    func close() async {
        await withTaskGroup(of: Void.self) { group in
            for node in nodes { group.addTask { await node.close() } }
        }
    }

    var dropped: Int { nodes.map(\.dropped).reduce(0, +) }

    /// The nodes that have handed over no retained message outside `named` so far: after a read of wildcard filters
    /// (and the `named` topics), the nodes that serve no retained message to a wildcard (RabbitMQ), whose devices'
    /// topics must be read by name. The others (mosquitto, NATS) brought everything through the wildcards, and a
    /// read by name there would only cost: on NATS each QoS 1 filter is a replicated JetStream consumer, and a
    /// few hundred at once time out.
    func blindToWildcards(named: Set<String>) -> [RetainedSnapshot] {
        nodes.filter { node in !node.messages.contains { $0.retain && !named.contains($0.topic) } }
    }

    /// The node names, `host:port`.
    var names: [String] { nodes.map(\.node) }

    /// A desired document as the nodes retain it: the newest (highest version) and what each node holds.
    struct Retained {
        /// The newest document's bytes as published (a signed envelope stays one), or nil when no node has one.
        var payload: [UInt8]?
        var document: DesiredDocument?
        /// Node → the version it retains (nil: nothing, or not a readable document).
        var versions: [String: Int?]
        /// A node's retained payload that is not a valid document: node → why.
        var unreadable: [String: String]

        /// Nodes that retain an older version than the newest, or none.
        var behind: [String] {
            guard let newest = document?.version else { return [] }
            return versions.filter { ($0.value ?? 0) < newest }.keys.sorted()
        }
    }

    /// Each node's last message per topic, as of now: computed once for many `retained(on:in:)` look-ups.
    var latest: [[String: InboundMessage]] { nodes.map(\.latest) }

    /// What the nodes retain on `topic`, as of their last `read` (and what they heard since); `latest` from
    /// `self.latest`, when many topics are looked up. `open` reads a payload as a document — by default unverified
    /// (for display: what devices apply they verify themselves); `fleet set` passes the devices' own verification,
    /// so that it never builds on a document they would refuse.
    func retained(
        on topic: String,
        in latest: [[String: InboundMessage]]? = nil,
        open: (([UInt8]) -> Result<DesiredDocument, Unreadable>)? = nil
    ) -> Retained {
        var result = Retained(payload: nil, document: nil, versions: [:], unreadable: [:])
        let latest = latest ?? self.latest
        for (index, node) in nodes.enumerated() {
            guard let message = latest[index][topic], !message.payload.isEmpty else {
                result.versions[node.node] = .some(nil)
                continue
            }
            switch open?(message.payload) ?? Self.unverified(message.payload, topic: topic) {
            case .success(let document):
                result.versions[node.node] = document.version
                if document.version > (result.document?.version ?? Int.min) {
                    result.document = document
                    result.payload = message.payload
                }
            case .failure(let unreadable):
                result.versions[node.node] = .some(nil)
                result.unreadable[node.node] = Printable.text(unreadable.reason, limit: 600)
            }
        }
        return result
    }

    /// Why a retained payload is not a document to use.
    struct Unreadable: Error {
        var reason: String
    }

    /// A retained payload as a document, unverified (see `RetainedDesiredDocument`).
    static func unverified(_ payload: [UInt8], topic: String) -> Result<DesiredDocument, Unreadable> {
        guard let members = RetainedDesiredDocument.members(payload) else {
            return .failure(Unreadable(reason: "not a JSON object within the document limits"))
        }
        do {
            return .success(try DesiredDocument.decode(members: members, source: topic))
        } catch {
            return .failure(Unreadable(reason: "\(error)"))
        }
    }

    /// Every device's newest status, over all nodes (retained and live), keyed by the device of the topic each
    /// came from under the `topics.root` template `root`.
    func statuses(root: String) -> [String: AgentStatus] {
        var book = StatusBook(root: root)
        book.update(from: self)
        return book.newest
    }

    /// Each device's configuration document (`{root}/configuration`), the newest over all nodes (boot count, then
    /// time), keyed by the device of its topic.
    func configurations(root: String) -> [String: ConfigurationStatus] {
        let decoder = JSONDecoder()
        var newest: [String: ConfigurationStatus] = [:]
        for node in nodes {
            for (topic, message) in node.latest where !message.payload.isEmpty {
                guard let device = FleetDeviceStatus.device(of: topic, root: root, \.configuration),
                    (try? StrictJSON.parse(message.payload, limits: .document)) != nil,
                    let document = try? decoder.decode(ConfigurationStatus.self, from: Data(message.payload))
                else { continue }
                if let known = newest[device],
                    (known.bootCount ?? 0, known.time ?? 0) >= (document.bootCount ?? 0, document.time ?? 0)
                {
                    continue
                }
                newest[device] = document
            }
        }
        return newest
    }
}

/// Each device's newest status, kept up to date from a `FleetSnapshot`'s messages as they arrive (each message
/// decoded once): the highest boot count, then the latest time. A will's time is when its connection began, so
/// it follows every birth of an earlier connection and precedes the births of its own. A status belongs to the
/// device of its topic (which the shipped ACL lets only that device write), whatever its body says.
struct StatusBook {
    private(set) var newest: [String: AgentStatus] = [:]
    private let root: String
    /// Per node, the messages already read.
    private var consumed: [Int] = []
    private let decoder = JSONDecoder()

    init(root: String) {
        self.root = root
    }

    mutating func update(from snapshot: FleetSnapshot) {
        if consumed.count != snapshot.nodes.count { consumed = Array(repeating: 0, count: snapshot.nodes.count) }
        for (index, node) in snapshot.nodes.enumerated() {
            let fresh = node.messages(from: consumed[index])
            consumed[index] += fresh.count
            for message in fresh where !message.payload.isEmpty {
                guard let device = FleetDeviceStatus.device(of: message.topic, root: root, \.status),
                    (try? StrictJSON.parse(message.payload, limits: .document)) != nil,
                    let status = try? decoder.decode(AgentStatus.self, from: Data(message.payload))
                else { continue }
                if let known = newest[device], (known.bootCount, known.time) >= (status.bootCount, status.time) {
                    continue
                }
                newest[device] = status
            }
        }
    }
}
