import MemoryBroker
import SparkplugB
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What reached the brokers, as the invariants need it: every PUBLISH a broker took from a client (where a
/// publisher's responsibility ends), keyed by topic and payload; per stream topic the times messages arrived; and
/// per device and command id the replies.
package final class SimulationLedger: @unchecked Sendable {
    /// A message as the ledger keeps it: 64 bits of a hash over its topic and payload (payloads carry their
    /// sample's timestamp, so distinct messages do not meet; keeping every payload whole cost more than the agent).
    /// Eight bytes a step, each mixed by a multiply and SplitMix's finaliser at the end: byte-wise FNV-1a was a
    /// fifth of the ledger's cost.
    enum Fingerprint {
        static func of(topic: String, payload: [UInt8]) -> UInt64 {
            var topic = topic
            var hash = topic.withUTF8 { mix(UnsafeRawBufferPointer($0), into: 0x9E37_79B9_7F4A_7C15) }
            hash = payload.withUnsafeBytes { mix($0, into: hash ^ 0xFF) }
            return finalise(hash)
        }

        private static func mix(_ bytes: UnsafeRawBufferPointer, into seed: UInt64) -> UInt64 {
            var hash = seed ^ UInt64(bytes.count)
            var offset = 0
            while offset + 8 <= bytes.count {
                let word = bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
                hash = (hash ^ word) &* 0xBF58_476D_1CE4_E5B9
                hash ^= hash >> 29
                offset += 8
            }
            var tail: UInt64 = 0
            var shift: UInt64 = 0
            while offset < bytes.count {
                tail |= UInt64(bytes[offset]) << shift
                shift += 8
                offset += 1
            }
            return (hash ^ tail) &* 0x94D0_49BB_1331_11EB
        }

        private static func finalise(_ value: UInt64) -> UInt64 {
            var z = value
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    /// What arrived on one topic: one dictionary look-up a publication.
    private struct TopicRecord {
        var arrivals: [Double] = []
        var samples: [SampleArrival] = []
    }

    private struct State {
        var accepted = FingerprintSet(capacity: 4096)
        var topics: [String: TopicRecord] = [:]
        var sparkplug: [String: [SparkplugArrival]] = [:]
        var replies: [String: Int] = [:]
        var publications = 0
    }

    private static let operatorReplyPrefix = SimulatedOperator.replyTopic + "/"

    private let state = Mutex(State())
    private let now: @Sendable () -> Double
    /// Arrivals per topic and the samples in payloads are kept from this time on (monotonic s): the invariants
    /// that read them look at the quiet stretch only, and reading every payload of the faulty part was a third of
    /// the ledger's cost. Fingerprints and replies are kept throughout.
    private let topicsFrom: Double

    init(now: @escaping @Sendable () -> Double, topicsFrom: Double = -.infinity) {
        self.now = now
        self.topicsFrom = topicsFrom
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
        if topic.hasPrefix(Self.operatorReplyPrefix) || topic.hasSuffix("/control/reply") {
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
        let keepTopic = time >= topicsFrom
        if keepTopic, reply == nil, sparkplug == nil, !publication.retain {
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
            guard keepTopic else { return }
            state.topics[topic, default: TopicRecord()].arrivals.append(time)
            if !scanned.isEmpty { state.topics[topic]?.samples.append(contentsOf: scanned) }
        }
    }

    /// One sample (or one message of a non-sample stream) as it reached a broker: its `seq` and the `timestamp`
    /// it was taken at (the agent's monotonic clock, which is the world's).
    package struct SampleArrival: Sendable, Equatable {
        package var arrival: Double
        package var seq: Int
        package var timestamp: Double
    }

    /// Calls `body` with each `"seq":N` of a JSON payload and the `"timestamp":T` that follows it (a batch holds
    /// one pair per sample). Binary payloads and documents without them are skipped.
    package static func scanSamples(_ payload: [UInt8], _ body: (Int, Double) -> Void) {
        guard payload.first == UInt8(ascii: "{") || payload.first == UInt8(ascii: "[") else { return }
        payload.withUnsafeBufferPointer { bytes in
            var cursor = 0
            while let seqStart = find(seqKey, in: bytes, from: cursor) {
                guard let seq = integer(in: bytes, at: seqStart),
                    let timestampStart = find(timestampKey, in: bytes, from: seq.end),
                    let timestamp = double(in: bytes, at: timestampStart)
                else { return }
                body(seq.value, timestamp.value)
                cursor = timestamp.end
            }
        }
    }

    private static let seqKey = Array(#""seq":"#.utf8)
    private static let timestampKey = Array(#""timestamp":"#.utf8)

    /// The index just past the first `key` at or after `start`: libc's `memchr` finds each candidate first byte
    /// (a byte-wise scan was most of the ledger's reading; Glibc's module does not export `memmem`).
    private static func find(_ key: [UInt8], in bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> Int? {
        guard let base = bytes.baseAddress, let first = key.first else { return nil }
        var index = start
        while index + key.count <= bytes.count {
            guard let hit = memchr(base + index, Int32(first), bytes.count - key.count + 1 - index) else {
                return nil
            }
            index = base.distance(to: hit.assumingMemoryBound(to: UInt8.self))
            if memcmp(base + index, key, key.count) == 0 { return index + key.count }
            index += 1
        }
        return nil
    }

    private static func integer(in bytes: UnsafeBufferPointer<UInt8>, at start: Int) -> (value: Int, end: Int)? {
        var index = start
        let negative = index < bytes.count && bytes[index] == UInt8(ascii: "-")
        if negative { index += 1 }
        var value = 0
        let digits = index
        while index < bytes.count, bytes[index] >= UInt8(ascii: "0"), bytes[index] <= UInt8(ascii: "9") {
            let (times, overflow) = value.multipliedReportingOverflow(by: 10)
            guard !overflow else { return nil }
            value = times + Int(bytes[index] - UInt8(ascii: "0"))
            index += 1
        }
        guard index > digits else { return nil }
        return (negative ? -value : value, index)
    }

    /// A JSON number, read as Swift's `Double(String)` reads it (correctly rounded).
    private static func double(in bytes: UnsafeBufferPointer<UInt8>, at start: Int) -> (value: Double, end: Int)? {
        var end = start
        while end < bytes.count, isNumberByte(bytes[end]) { end += 1 }
        guard end > start, end - start <= 64 else { return nil }
        let text = Substring(decoding: UnsafeBufferPointer(rebasing: bytes[start..<end]), as: UTF8.self)
        guard let value = Double(text) else { return nil }
        return (value, end)
    }

    private static func isNumberByte(_ byte: UInt8) -> Bool {
        (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")) || byte == UInt8(ascii: ".")
            || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "e") || byte == UInt8(ascii: "E")
            || byte == UInt8(ascii: "+")
    }

    /// A Sparkplug message of an edge node as a broker took it.
    package struct SparkplugArrival: Sendable, Equatable {
        /// NBIRTH, DBIRTH, DDATA, NDATA, DDEATH, NDEATH.
        package var type: String
        /// The payload's `seq` (absent from an NDEATH).
        package var seq: UInt64?
        package var arrival: Double
    }

    /// What the edge node `node` published, in the order the brokers took it.
    package func sparkplug(node: String) -> [SparkplugArrival] {
        state.withLock { $0.sparkplug[node] ?? [] }
    }

    /// The samples that reached a broker on `topic` from `topicsFrom` on, in the order they arrived.
    package func samples(on topic: String) -> [SampleArrival] {
        state.withLock { $0.topics[topic]?.samples ?? [] }
    }

    /// `device/id` of a reply; replies without an id (429: the command was not read) are keyed by nothing.
    private static func replyKey(topic: String, payload: [UInt8]) -> String? {
        payload.withUnsafeBufferPointer { bytes -> String? in
            guard let idStart = find(idKey, in: bytes, from: 0), let idEnd = quote(in: bytes, from: idStart) else {
                return nil
            }
            let id = String(decoding: UnsafeBufferPointer(rebasing: bytes[idStart..<idEnd]), as: UTF8.self)
            if let deviceStart = find(deviceKey, in: bytes, from: 0),
                let deviceEnd = quote(in: bytes, from: deviceStart)
            {
                let device = String(
                    decoding: UnsafeBufferPointer(rebasing: bytes[deviceStart..<deviceEnd]),
                    as: UTF8.self
                )
                return "\(device)/\(id)"
            }
            return "\(topic)/\(id)"
        }
    }

    private static let idKey = Array(#""id":""#.utf8)
    private static let deviceKey = Array(#""device":""#.utf8)

    private static func quote(in bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> Int? {
        bytes[start...].firstIndex(of: UInt8(ascii: "\""))
    }

    /// Whether a broker took this message (not retained) from some client.
    package func accepted(topic: String, payload: [UInt8]) -> Bool {
        let fingerprint = Fingerprint.of(topic: topic, payload: payload)
        return state.withLock { $0.accepted.contains(fingerprint) }
    }

    /// Messages that arrived on `topic` at or after `time` (counted from `topicsFrom` on).
    package func arrivals(on topic: String, since time: Double) -> Int {
        state.withLock { state in state.topics[topic]?.arrivals.reduce(0) { $0 + ($1 >= time ? 1 : 0) } ?? 0 }
    }

    /// Replies per `device/id`.
    package var replies: [String: Int] { state.withLock { $0.replies } }

    package var publications: Int { state.withLock { $0.publications } }
}
