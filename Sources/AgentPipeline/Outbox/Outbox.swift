import AgentPorts
import Foundation
import Synchronization

/// The one bounded queue between the streams and the MQTT client.
///
/// Streams enqueue encoded messages from the acquisition thread; the publisher drains them from its own thread
/// when the broker is connected. So acquisition never waits on the network, QoS 0 messages survive short
/// outages (libmosquitto drops them while disconnected), and QoS > 0 messages do not pile up without bound
/// inside libmosquitto.
///
/// Storage is reserved once: a byte arena for payloads and a ring of entries. When either is full the oldest
/// message is dropped and counted — for telemetry, the newest data is worth more than the oldest.
///
/// A message may carry an expiry (`streams.<name>.expiry_s`): once it has waited that long it is dropped
/// before it is lent (counted in `droppedExpired`), and a message lent in time carries what is left of its
/// expiry, for the broker's MQTT 5 Message Expiry Interval.
package final class Outbox: @unchecked Sendable {
    package struct Counters: Sendable, Hashable, Codable {
        package var enqueued: UInt64 = 0
        package var published: UInt64 = 0
        /// Dropped because the outbox was full (oldest first).
        package var droppedOverflow: UInt64 = 0
        /// Refused at the door: larger than the whole arena, or an unknown topic.
        package var rejected: UInt64 = 0
        /// Refused by the client as invalid (never retried, so one bad message cannot block the queue).
        package var failed: UInt64 = 0
        /// Dropped unsent because they waited longer than their expiry (`streams.<name>.expiry_s`).
        package var droppedExpired: UInt64 = 0
        package var depth: Int = 0
        package var bytes: Int = 0

        package init() {}

        /// Counters written before `droppedExpired` existed decode with it at 0.
        package init(from decoder: any Decoder) throws {
            let values = try decoder.container(keyedBy: CodingKeys.self)
            enqueued = try values.decode(UInt64.self, forKey: .enqueued)
            published = try values.decode(UInt64.self, forKey: .published)
            droppedOverflow = try values.decode(UInt64.self, forKey: .droppedOverflow)
            rejected = try values.decode(UInt64.self, forKey: .rejected)
            failed = try values.decode(UInt64.self, forKey: .failed)
            droppedExpired = try values.decodeIfPresent(UInt64.self, forKey: .droppedExpired) ?? 0
            depth = try values.decode(Int.self, forKey: .depth)
            bytes = try values.decode(Int.self, forKey: .bytes)
        }
    }

    /// A message lent to the drainer.
    package struct Message {
        package var sequence: UInt64
        package var topicID: Int
        package var qos: Int
        package var retain: Bool
        package var payload: UnsafeRawBufferPointer
        /// What is left of the message's expiry, whole seconds rounded up (at least 1); 0: it never expires.
        package var expirySeconds: UInt32
    }

    private struct Entry {
        var sequence: UInt64
        var topicID: UInt32
        var qos: UInt8
        var retain: Bool
        var offset: Int
        var length: Int
        /// The expiry it was queued with, seconds; 0: none.
        var expirySeconds: UInt32
        /// When it was queued, monotonic nanoseconds (read only for messages that expire).
        var enqueuedNanos: UInt64
    }

    package let capacityBytes: Int
    package let capacityMessages: Int
    /// Where messages of durable streams go instead: a second ring that a writer thread empties into the
    /// durable log whether the broker is connected or not, so they never wait behind memory-only messages.
    package let durableStaging: Outbox?
    /// Whether durable streams' messages go to `durableStaging`: only once the durable log is open
    /// (`routeDurableMessages()`), so a staged message always has a log to go to; until then they stay in memory.
    private let routesDurable: Atomic<Bool>

    private let lock = NSCondition()
    /// Monotonic nanoseconds; a test passes its own clock.
    private let monotonicNanos: @Sendable () -> UInt64
    private let arena: UnsafeMutableRawBufferPointer
    private let entries: UnsafeMutablePointer<Entry>
    private var head = 0  // oldest entry
    private var count = 0
    private var writeOffset = 0
    private var nextSequence: UInt64 = 1
    private var counters = Counters()
    private var usedBytes = 0
    private var closed = false

    /// A private copy for the drainer, so the lock is not held while the client copies the payload.
    private let lendBuffer: UnsafeMutableRawBufferPointer

    package init(
        capacityBytes: Int = 4 << 20,
        capacityMessages: Int = 65_536,
        durableStaging: Outbox? = nil,
        routesDurable: Bool = true,
        monotonicNanos: @escaping @Sendable () -> UInt64 = Outbox.monotonicNanos
    ) {
        self.durableStaging = durableStaging
        self.routesDurable = Atomic(routesDurable)
        self.monotonicNanos = monotonicNanos
        self.capacityBytes = max(1024, capacityBytes)
        self.capacityMessages = max(16, capacityMessages)
        // Reserved, not touched: the ring rewinds to the start of the arena and of the entries whenever it
        // empties, so a connected agent keeps only the first pages resident and the bound is reached (and
        // paid for in RSS) only by a real backlog.
        arena = .allocate(byteCount: self.capacityBytes, alignment: 16)
        entries = .allocate(capacity: self.capacityMessages)
        lendCapacity = min(self.capacityBytes, Self.maximumMessageBytes)
        lendBuffer = .allocate(byteCount: lendCapacity, alignment: 16)
    }

    /// The largest message accepted, bytes: a batch of 1000 device-motion samples in JSON is about 700 kB.
    package static let maximumMessageBytes = 1 << 20
    private let lendCapacity: Int
    /// Drainers waiting for a message: enqueue signals only then, instead of a futex wake per message.
    private var waiters = 0

    deinit {
        arena.deallocate()
        entries.deallocate()
        lendBuffer.deallocate()
    }

    package var snapshot: Counters {
        lock.lock()
        defer { lock.unlock() }
        var c = counters
        c.depth = count
        c.bytes = usedBytes
        return c
    }

    /// From now on durable streams' messages go to `durableStaging` (the durable log was opened).
    package func routeDurableMessages() {
        routesDurable.store(true, ordering: .releasing)
    }

    /// Whether durable streams' messages go to `durableStaging`.
    package var routesDurableMessages: Bool { durableStaging != nil && routesDurable.load(ordering: .acquiring) }

    /// CLOCK_MONOTONIC in nanoseconds.
    package static func monotonicNanos() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return UInt64(ts.tv_sec) &* 1_000_000_000 &+ UInt64(ts.tv_nsec)
    }

    /// Queues a copy of `payload`. Never blocks on the network; drops the oldest messages when full.
    /// Returns `false` when the message can never fit (larger than the arena). `durable` messages go to
    /// `durableStaging` when there is one. `expirySeconds` > 0: the message is dropped unsent once it has
    /// waited that long.
    @discardableResult
    package func enqueue(
        topicID: Int,
        qos: Int,
        retain: Bool,
        payload: UnsafeRawBufferPointer,
        durable: Bool = false,
        expirySeconds: UInt32 = 0
    ) -> Bool {
        if durable, let durableStaging, routesDurable.load(ordering: .acquiring) {
            return durableStaging.enqueue(
                topicID: topicID,
                qos: qos,
                retain: retain,
                payload: payload,
                expirySeconds: expirySeconds
            )
        }
        // The clock is read only for messages that can expire: most streams never pay for it.
        let enqueuedNanos = expirySeconds > 0 ? monotonicNanos() : 0
        let length = max(1, payload.count)
        lock.lock()
        defer { lock.unlock() }
        guard length <= lendCapacity, topicID >= 0 else {
            counters.rejected += 1
            return false
        }
        var offset = reserve(length)
        while offset == nil {
            dropOldest()
            offset = reserve(length)
        }
        let start = offset!
        if payload.count > 0 {
            UnsafeMutableRawBufferPointer(rebasing: arena[start..<(start + payload.count)])
                .copyMemory(from: payload)
        }
        if count == capacityMessages { dropOldest() }
        let slot = (head + count) % capacityMessages
        entries[slot] = Entry(
            sequence: nextSequence,
            topicID: UInt32(topicID),
            qos: UInt8(qos),
            retain: retain,
            offset: start,
            length: payload.count,
            expirySeconds: expirySeconds,
            enqueuedNanos: enqueuedNanos
        )
        nextSequence += 1
        count += 1
        writeOffset = start + length
        usedBytes += length
        counters.enqueued += 1
        if waiters > 0 { lock.signal() }
        return true
    }

    /// The arena offset where `length` contiguous bytes fit, or nil when the oldest must go first.
    private func reserve(_ length: Int) -> Int? {
        guard count > 0 else {
            writeOffset = 0
            return 0
        }
        let readOffset = entries[head].offset
        if writeOffset > readOffset {
            if capacityBytes - writeOffset >= length { return writeOffset }
            // Wrap: the tail gap stays unused until the reader passes it.
            if length < readOffset { return 0 }
            return nil
        }
        // Wrapped: free space is between the newest message's end and the oldest's start.
        if readOffset - writeOffset > length { return writeOffset }
        return nil
    }

    private func dropOldest() {
        guard count > 0 else { return }
        popHead()
        counters.droppedOverflow += 1
    }

    private func popHead() {
        usedBytes -= max(1, entries[head].length)
        head = (head + 1) % capacityMessages
        count -= 1
        if count == 0 {
            head = 0
            writeOffset = 0
        }
    }

    /// Drops the expired messages at the head (only the head is looked at: the oldest message expires first
    /// unless streams differ in expiry, and a younger expired one goes when it reaches the head). Returns what
    /// is left of the head's expiry in nanoseconds, or nil when the head never expires or there is none.
    private func dropExpiredHead() -> UInt64? {
        var now: UInt64?
        while count > 0 {
            let entry = entries[head]
            guard entry.expirySeconds > 0 else { return nil }
            let clock = now ?? monotonicNanos()
            now = clock
            let waited = clock >= entry.enqueuedNanos ? clock - entry.enqueuedNanos : 0
            let expiry = UInt64(entry.expirySeconds) * 1_000_000_000
            if waited < expiry { return expiry - waited }
            popHead()
            counters.droppedExpired += 1
        }
        return nil
    }

    /// Whole seconds of `nanos`, rounded up: a message lent with 0.2 s left is sent with 1 s (0 would mean
    /// no expiry at all).
    static func expirySeconds(remainingNanos nanos: UInt64) -> UInt32 {
        UInt32(min(UInt64(UInt32.max), (nanos + 999_999_999) / 1_000_000_000))
    }

    /// Waits up to `timeout` seconds for a message and lends a copy of the oldest one to `body`, which
    /// returns whether it is done with it (published, or refused as invalid). A message that was dropped
    /// meanwhile by overflow is not popped twice. Expired messages at the head are dropped first (counted).
    ///
    /// - Returns: `false` when nothing was available within the timeout or the outbox is closed.
    package func withOldest(timeout: Double, _ body: (Message) -> Disposition) -> Bool {
        lock.lock()
        var remaining = dropExpiredHead()
        if count == 0 && !closed && timeout > 0 {
            waiters += 1
            _ = lock.wait(until: Date(timeIntervalSinceNow: timeout))
            waiters -= 1
            remaining = dropExpiredHead()
        }
        guard count > 0 else {
            lock.unlock()
            return false
        }
        let entry = entries[head]
        if entry.length > 0 {
            lendBuffer.copyMemory(
                from: UnsafeRawBufferPointer(rebasing: arena[entry.offset..<(entry.offset + entry.length)])
            )
        }
        lock.unlock()

        let disposition = body(
            Message(
                sequence: entry.sequence,
                topicID: Int(entry.topicID),
                qos: Int(entry.qos),
                retain: entry.retain,
                payload: UnsafeRawBufferPointer(rebasing: lendBuffer[0..<entry.length]),
                expirySeconds: remaining.map(Self.expirySeconds(remainingNanos:)) ?? 0
            )
        )
        guard disposition != .keep else { return false }
        lock.lock()
        if count > 0 && entries[head].sequence == entry.sequence {
            popHead()
            if disposition == .published { counters.published += 1 } else { counters.failed += 1 }
        }
        lock.unlock()
        return true
    }

    package enum Disposition: Sendable {
        /// Handed to the client: remove it.
        case published
        /// The client refused it as invalid: remove and count it.
        case failed
        /// Not sent (not connected, window full): keep it for later.
        case keep
    }

    /// Wakes a waiting drainer (at shutdown, or when the connection comes back).
    package func wake() {
        lock.lock()
        lock.broadcast()
        lock.unlock()
    }

    package func close() {
        lock.lock()
        closed = true
        lock.broadcast()
        lock.unlock()
    }

    package var isEmpty: Bool {
        lock.lock()
        defer { lock.unlock() }
        return count == 0
    }
}
