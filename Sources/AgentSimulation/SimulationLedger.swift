import MemoryBroker
import Synchronization

/// What reached the brokers, as the invariants need it: every PUBLISH a broker took from a client (where a
/// publisher's responsibility ends), keyed by topic and payload; per stream topic the times messages arrived; and
/// per device and command id the replies.
public final class SimulationLedger: @unchecked Sendable {
    /// A message as the ledger keeps it: 64 bits of FNV-1a over its topic and payload (payloads carry their
    /// sample's timestamp, so distinct messages do not meet; keeping every payload whole cost more than the agent).
    struct Fingerprint: Hashable {
        let value: UInt64

        init(topic: String, payload: [UInt8]) {
            var hash: UInt64 = 0xcbf2_9ce4_8422_2325
            for byte in topic.utf8 { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
            hash = (hash ^ 0xFF) &* 0x100_0000_01b3
            for byte in payload { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
            value = hash
        }
    }

    private struct State {
        var accepted = Set<Fingerprint>()
        var arrivals: [String: [Double]] = [:]
        var replies: [String: Int] = [:]
        var publications = 0
    }

    private let state = Mutex(State())
    private let now: @Sendable () -> Double

    init(now: @escaping @Sendable () -> Double) {
        self.now = now
    }

    /// Listens to everything `broker` takes.
    func observe(_ broker: MemoryBroker) {
        broker.setPublishObserver { [self] publication in record(publication) }
    }

    private func record(_ publication: MemoryBroker.Publication) {
        let time = now()
        let topic = publication.topic
        let fingerprint = Fingerprint(topic: topic, payload: publication.payload)
        var reply: String?
        if topic.hasPrefix(SimulatedOperator.replyTopic + "/") || topic.hasSuffix("/control/reply") {
            reply = Self.replyKey(topic: topic, payload: publication.payload)
        }
        state.withLock { state in
            state.publications += 1
            if let reply {
                state.replies[reply, default: 0] += 1
                return
            }
            guard !publication.retain else { return }
            state.accepted.insert(fingerprint)
            state.arrivals[topic, default: []].append(time)
        }
    }

    /// `device/id` of a reply; replies without an id (429: the command was not read) are keyed by nothing.
    private static func replyKey(topic: String, payload: [UInt8]) -> String? {
        let text = String(decoding: payload, as: UTF8.self)
        guard let idRange = text.range(of: "\"id\":\"") else { return nil }
        let idStart = idRange.upperBound
        guard let idEnd = text[idStart...].firstIndex(of: "\"") else { return nil }
        let device: Substring
        if let deviceRange = text.range(of: "\"device\":\""),
            let end = text[deviceRange.upperBound...].firstIndex(of: "\"")
        {
            device = text[deviceRange.upperBound..<end]
        } else {
            device = Substring(topic)
        }
        return "\(device)/\(text[idStart..<idEnd])"
    }

    /// Whether a broker took this message (not retained) from some client.
    public func accepted(topic: String, payload: [UInt8]) -> Bool {
        let fingerprint = Fingerprint(topic: topic, payload: payload)
        return state.withLock { $0.accepted.contains(fingerprint) }
    }

    /// Messages that arrived on `topic` at or after `time`.
    public func arrivals(on topic: String, since time: Double) -> Int {
        state.withLock { state in state.arrivals[topic]?.reduce(0) { $0 + ($1 >= time ? 1 : 0) } ?? 0 }
    }

    /// Replies per `device/id`.
    public var replies: [String: Int] { state.withLock { $0.replies } }

    public var publications: Int { state.withLock { $0.publications } }
}
