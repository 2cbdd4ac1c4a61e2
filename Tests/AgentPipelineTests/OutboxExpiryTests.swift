import AgentPipeline
import AgentPorts
import Foundation
import Logging
import MotionWire
import Platform
import Synchronization
import Testing

/// `streams.<name>.expiry_s` in the agent's own queues: the memory outbox drops a message that waited longer
/// than its expiry before lending it (counted exactly), lends the rest with what is left of their expiry, and
/// the durable log's replay discards expired records the same way. A manual clock, no broker.
@Suite struct OutboxExpiryTests {
    /// A monotonic clock the test moves by hand, nanoseconds.
    final class ManualNanos: Sendable {
        let now = Atomic<UInt64>(1_000_000_000)
        func advance(seconds: Double) { now.add(UInt64(seconds * 1e9), ordering: .relaxed) }
        var read: @Sendable () -> UInt64 { { self.now.load(ordering: .relaxed) } }
    }

    private func enqueue(_ outbox: Outbox, _ value: UInt8, expiry: UInt32, topicID: Int = 0) {
        [value, 0, 0].withUnsafeBytes {
            _ = outbox.enqueue(topicID: topicID, qos: 1, retain: false, payload: $0, expirySeconds: expiry)
        }
    }

    /// Lends everything left (as the publisher does), returning each message's first byte and lent expiry.
    private func drain(_ outbox: Outbox) -> [(value: UInt8, expiry: UInt32)] {
        var out: [(UInt8, UInt32)] = []
        while outbox.withOldest(
            timeout: 0,
            { message in
                out.append((message.payload[0], message.expirySeconds))
                return .published
            }
        ) {}
        return out
    }

    @Test func messagesOlderThanTheirExpiryAreDroppedBeforeSendingAndCountedExactly() {
        let clock = ManualNanos()
        let outbox = Outbox(capacityBytes: 4096, monotonicNanos: clock.read)
        // 10 messages queued at t = 0 s … 9 s with a 5 s expiry; the broker comes back at t = 12 s: the
        // ones queued at 0 … 7 s waited 5 s or more (expired), 8 and 9 s are 4 and 3 s old (1 and 2 s left).
        for value in 0..<10 {
            enqueue(outbox, UInt8(value), expiry: 5)
            clock.advance(seconds: 1)
        }
        clock.advance(seconds: 2)
        let lent = drain(outbox)
        #expect(lent.map(\.value) == [8, 9])
        #expect(lent.map(\.expiry) == [1, 2])
        let counters = outbox.snapshot
        #expect(counters.droppedExpired == 8)
        #expect(counters.published == 2)
        #expect(counters.droppedOverflow == 0)
        #expect(counters.enqueued == counters.published + counters.droppedExpired)
    }

    @Test func theLentExpiryIsWhatIsLeftRoundedUpAndNeverZero() {
        let clock = ManualNanos()
        let outbox = Outbox(capacityBytes: 4096, monotonicNanos: clock.read)
        enqueue(outbox, 1, expiry: 10)
        clock.advance(seconds: 3.2)  // 6.8 s left → 7
        #expect(drain(outbox).map(\.expiry) == [7])
        enqueue(outbox, 2, expiry: 10)
        clock.advance(seconds: 9.9)  // 0.1 s left → 1, not 0 (which would mean "never expires")
        #expect(drain(outbox).map(\.expiry) == [1])
        enqueue(outbox, 3, expiry: 10)
        clock.advance(seconds: 10)  // exactly its expiry: gone
        #expect(drain(outbox).isEmpty)
        #expect(outbox.snapshot.droppedExpired == 1)
    }

    @Test func messagesWithoutExpiryNeverExpireAndSendNone() {
        let clock = ManualNanos()
        let outbox = Outbox(capacityBytes: 4096, monotonicNanos: clock.read)
        enqueue(outbox, 1, expiry: 0)
        enqueue(outbox, 2, expiry: 2)
        clock.advance(seconds: 3600)
        // The head never expires, so it goes; the expired one behind it goes when it reaches the head.
        let lent = drain(outbox)
        #expect(lent.map(\.value) == [1])
        #expect(lent.map(\.expiry) == [0])
        #expect(outbox.snapshot.droppedExpired == 1)
    }

    @Test func streamsWithDifferentExpiriesEachKeepTheirOwn() {
        let clock = ManualNanos()
        let outbox = Outbox(capacityBytes: 4096, monotonicNanos: clock.read)
        for value in 0..<6 {
            // Even values: 2 s expiry (topic 0); odd: 60 s (topic 1).
            enqueue(outbox, UInt8(value), expiry: value % 2 == 0 ? 2 : 60, topicID: value % 2)
        }
        clock.advance(seconds: 30)
        let lent = drain(outbox)
        #expect(lent.map(\.value) == [1, 3, 5])
        #expect(lent.map(\.expiry) == [30, 30, 30])
        #expect(outbox.snapshot.droppedExpired == 3)
    }

    @Test func durableMessagesCarryTheirExpiryIntoTheStagingRing() {
        let clock = ManualNanos()
        let staging = Outbox(capacityBytes: 4096, monotonicNanos: clock.read)
        let outbox = Outbox(capacityBytes: 4096, durableStaging: staging, monotonicNanos: clock.read)
        [7, 0].withUnsafeBytes {
            _ = outbox.enqueue(topicID: 0, qos: 1, retain: false, payload: $0, durable: true, expirySeconds: 1)
        }
        clock.advance(seconds: 1)
        #expect(drain(staging).isEmpty)
        #expect(staging.snapshot.droppedExpired == 1)
        #expect(outbox.snapshot.enqueued == 0)
    }

    // MARK: The durable log's replay

    /// 2023-11-14, a synchronized clock's time in ms.
    private static let now: UInt64 = 1_700_000_000_000

    @Test(arguments: [
        // (written at, expiry s, now) → what is left (nil: expired)
        (now, UInt32(0), now + 86_400_000, UInt32?.some(0)),
        (now, 10, now, 10),
        (now, 10, now + 3_200, 7),
        (now, 10, now + 9_999, 1),
        (now, 10, now + 10_000, nil),
        (now, 10, now + 3_600_000, nil),
        // A record stamped by an unsynchronized clock (1970): its age is unknown, it keeps its whole expiry.
        (5_000, 10, now, 10),
        // The clock stepped back: no wait is counted.
        (now + 5_000, 10, now, 10),
    ])
    func remainingExpiryOfADurableRecord(written: UInt64, expiry: UInt32, now: UInt64, left: UInt32?) {
        #expect(DurableLog.remainingExpiry(ofRecordAt: written, expirySeconds: expiry, nowMillis: now) == left)
    }

    @Test func aDurableRecordPastItsExpiryIsDiscardedCountedAndNeverHandedOut() throws {
        let directory = NSTemporaryDirectory() + "durable-expiry-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let log = try DurableLog(
            storage: SegmentFiles(folder: directory),
            maxBytes: 1 << 20,
            maxAgeSeconds: 3600,
            logger: Logger(label: "outbox-expiry-tests")
        )
        for value in 0..<5 {
            try [UInt8(value)].withUnsafeBytes {
                _ = try log.append(
                    topic: "motion/d/device-motion",
                    qos: 1,
                    retain: false,
                    payload: $0,
                    nowMillis: Self.now + UInt64(value) * 1000
                )
            }
        }
        // Replayed at now + 6 s with a 3 s expiry: the records written at 0…3 s are expired, 4 s is not.
        let replayAt = Self.now + 6000
        var handed: [UInt8] = []
        while let record = log.next(nowMillis: replayAt) {
            if DurableLog.remainingExpiry(ofRecordAt: record.timeMillis, expirySeconds: 3, nowMillis: replayAt) == nil {
                log.discardExpired(record.seq)
            } else {
                log.markPublished(record.seq)
                handed.append(record.payload[0])
            }
        }
        #expect(handed == [4])
        let counters = log.snapshot
        #expect(counters.expired == 4)
        #expect(counters.dropped == 4)
        #expect(counters.published == 1)
        #expect(counters.backlog == 0)
        // The expired records no longer hold the cursor back: acknowledging the one sent frees everything.
        log.acknowledge(5)
        #expect(log.snapshot.depth == 0)
        #expect(log.snapshot.acknowledged == 1)
    }
}
