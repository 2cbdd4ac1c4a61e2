import MemoryBroker
import SparkplugB
import Synchronization

/// What reached the brokers, as the invariants need it: every PUBLISH a broker took from a client (where a
/// publisher's responsibility ends), keyed by topic and payload; per stream topic the times messages arrived; and
/// per device and command id the replies.
public final class SimulationLedger: @unchecked Sendable {
    /// A message as the ledger keeps it: 64 bits of FNV-1a over its topic and payload (payloads carry their
    /// sample's timestamp, so distinct messages do not meet; keeping every payload whole cost more than the agent).
    enum Fingerprint {
        static func of(topic: String, payload: [UInt8]) -> UInt64 {
            var hash: UInt64 = 0xcbf2_9ce4_8422_2325
            for byte in topic.utf8 { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
            hash = (hash ^ 0xFF) &* 0x100_0000_01b3
            return payload.withUnsafeBufferPointer { bytes in
                for byte in bytes { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
                return hash
            }
        }
    }

    private struct State {
        var accepted = FingerprintSet(capacity: 4096)
        var arrivals: [String: [Double]] = [:]
        var samples: [String: [SampleArrival]] = [:]
        var sparkplug: [String: [SparkplugArrival]] = [:]
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
        let fingerprint = Fingerprint.of(topic: topic, payload: publication.payload)
        var reply: String?
        if topic.hasPrefix(SimulatedOperator.replyTopic + "/") || topic.hasSuffix("/control/reply") {
            reply = Self.replyKey(topic: topic, payload: publication.payload)
        }
        var sparkplug: (node: String, arrival: SparkplugArrival)?
        if topic.hasPrefix("spBv1.0/") {
            let levels = topic.split(separator: "/")
            if levels.count >= 4 {
                sparkplug = (
                    String(levels[3]),
                    SparkplugArrival(
                        type: String(levels[2]),
                        seq: SparkplugStamp.seq(of: publication.payload),
                        arrival: time
                    )
                )
            }
        }
        // Scanned before the lock and appended with one look-up of the topic, not one per sample of a batch.
        var scanned: [SampleArrival] = []
        if reply == nil, sparkplug == nil, !publication.retain {
            Self.scanSamples(publication.payload) { seq, timestamp in
                scanned.append(SampleArrival(arrival: time, seq: seq, timestamp: timestamp))
            }
        }
        state.withLock { state in
            state.publications += 1
            if let sparkplug {
                state.sparkplug[sparkplug.node, default: []].append(sparkplug.arrival)
                return
            }
            if let reply {
                state.replies[reply, default: 0] += 1
                return
            }
            guard !publication.retain else { return }
            state.accepted.insert(fingerprint)
            state.arrivals[topic, default: []].append(time)
            if !scanned.isEmpty { state.samples[topic, default: []].append(contentsOf: scanned) }
        }
    }

    /// One sample (or one message of a non-sample stream) as it reached a broker: its `seq` and the `timestamp`
    /// it was taken at (the agent's monotonic clock, which is the world's).
    public struct SampleArrival: Sendable, Equatable {
        public var arrival: Double
        public var seq: Int
        public var timestamp: Double
    }

    /// Calls `body` with each `"seq":N` of a JSON payload and the `"timestamp":T` that follows it (a batch holds
    /// one pair per sample). Binary payloads and documents without them are skipped.
    package static func scanSamples(_ payload: [UInt8], _ body: (Int, Double) -> Void) {
        let seqKey = Array(#""seq":"#.utf8)
        let timestampKey = Array(#""timestamp":"#.utf8)
        guard payload.first == UInt8(ascii: "{") || payload.first == UInt8(ascii: "[") else { return }
        func find(_ key: [UInt8], from start: Int) -> Int? {
            var index = start
            while index + key.count <= payload.count {
                if payload[index] == key[0], payload[index..<(index + key.count)].elementsEqual(key) {
                    return index + key.count
                }
                index += 1
            }
            return nil
        }
        func number(at start: Int) -> (text: String, end: Int) {
            var end = start
            while end < payload.count, let scalar = Optional(payload[end]),
                (scalar >= UInt8(ascii: "0") && scalar <= UInt8(ascii: "9")) || scalar == UInt8(ascii: ".")
                    || scalar == UInt8(ascii: "-") || scalar == UInt8(ascii: "e") || scalar == UInt8(ascii: "+")
            {
                end += 1
            }
            return (String(decoding: payload[start..<end], as: UTF8.self), end)
        }
        var cursor = 0
        while let seqStart = find(seqKey, from: cursor) {
            let seq = number(at: seqStart)
            guard let value = Int(seq.text), let timestampStart = find(timestampKey, from: seq.end) else { return }
            let timestamp = number(at: timestampStart)
            guard let time = Double(timestamp.text) else { return }
            body(value, time)
            cursor = timestamp.end
        }
    }

    /// A Sparkplug message of an edge node as a broker took it.
    public struct SparkplugArrival: Sendable, Equatable {
        /// NBIRTH, DBIRTH, DDATA, NDATA, DDEATH, NDEATH.
        public var type: String
        /// The payload's `seq` (absent from an NDEATH).
        public var seq: UInt64?
        public var arrival: Double
    }

    /// What the edge node `node` published, in the order the brokers took it.
    public func sparkplug(node: String) -> [SparkplugArrival] {
        state.withLock { $0.sparkplug[node] ?? [] }
    }

    /// The samples that reached a broker on `topic`, in the order they arrived.
    public func samples(on topic: String) -> [SampleArrival] {
        state.withLock { $0.samples[topic] ?? [] }
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
        let fingerprint = Fingerprint.of(topic: topic, payload: payload)
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
