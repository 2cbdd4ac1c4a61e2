import AgentPorts
import Dispatch
import Foundation
import Logging
import Synchronization

/// Drains the outbox into the MQTT client on its own thread, only while the broker is connected, keeping at
/// most `window` QoS > 0 messages unacknowledged so libmosquitto's own queue (unbounded) stays small.
///
/// With a durable log, a second thread (the writer) moves the durable staging ring into the log at once,
/// connected or not, and keeps the log's cursor file current; the publisher sends the log's records in seq
/// order ahead of the memory outbox, at most `replayRate` a second, and the broker's acknowledgements
/// (matched by message id) advance the log's cursor.
///
/// `start` makes it the broker's acknowledgement handler: acknowledgements arrive straight from the client's
/// network thread, batched per loop turn, on a path no inbound message can block or drop.
///
/// Both loops are written as turns (`publishTurn`, `writeTurn`) that never block: with `Drive.threads` (the
/// agent) two threads turn them and sleep between turns; with `Drive.turns` (the simulation) nothing is started
/// and whoever runs the agent turns them, so a whole agent runs on one thread, on virtual time.
package final class OutboxPublisher: BrokerAcknowledgementHandler, Sendable {
    /// Who turns the two loops.
    package enum Drive: Sendable {
        /// Two threads of the publisher's own: the agent.
        case threads
        /// The caller, through `publishTurn()` and `writeTurn()`: the simulation, one loop for everything.
        case turns
    }

    /// What one turn of the publishing loop did, and so when the next can do more.
    package enum PublishTurn: Sendable, Equatable {
        /// Handed messages to the client: turn again at once.
        case sent
        /// Not connected, or the client refused for now: nothing moves until the connection changes.
        case waitingForConnection
        /// The window of unacknowledged messages is full: nothing moves until acknowledgements come.
        case windowFull
        /// The durable log's backlog waits for the replay pace: turn again at this monotonic time.
        case paced(untilMonotonic: Double)
        /// Nothing to send.
        case idle
    }

    /// What one turn of the durable writer did.
    package enum WriteTurn: Sendable, Equatable {
        /// Moved a staged message into the log: turn again at once.
        case wrote
        /// Nothing staged; the log's upkeep (cursor file, old segments) is next due at this monotonic time.
        case idle(maintenanceDueMonotonic: Double)
    }

    /// The durable half: the staging ring the streams fill, the log, and the replay rate (messages/s).
    package struct Durable: Sendable {
        package var staging: Outbox
        package var log: DurableLog
        package var replayRate: Double

        package init(staging: Outbox, log: DurableLog, replayRate: Double) {
            self.staging = staging
            self.log = log
            self.replayRate = replayRate
        }
    }

    private struct InFlight {
        /// Message id → durable seq (0 for a memory-only message), for every QoS > 0 message not yet acked.
        var seqs: [Int32: UInt64] = [:]
        /// QoS > 0 messages handed over since the connection came up and not yet acknowledged.
        var window = 0
        /// The publisher thread sleeps on `windowOpened` until the window is down to `resumeAt`.
        var publisherWaiting = false

        /// Whether the sleeping publisher must be woken now; clears the flag so it is woken once.
        mutating func takeWaiter(if condition: Bool = true) -> Bool {
            guard publisherWaiting && condition else { return false }
            publisherWaiting = false
            return true
        }
    }

    private let outbox: Outbox
    private let topics: TopicTable
    private let broker: BrokerClient
    private let window: Int
    private let logger: Logger
    /// The durable half, once there is one: at construction, or attached later (`attachDurable`) when the
    /// configuration in force first makes a stream durable.
    private let durableSlot: Mutex<Durable?>
    private var durable: Durable? { durableSlot.withLock { $0 } }
    private let connected = Atomic<Bool>(false)
    private let running = Atomic<Bool>(false)
    private let writing = Atomic<Bool>(false)
    private let inFlight = Mutex(InFlight())
    /// Signalled when the publisher sleeps on a full window and acknowledgements bring the window down to
    /// `resumeAt`, the connection changes, or `stop` is called. A semaphore, not a condition, so a signal
    /// given between the publisher's check and its wait is not lost.
    private let windowOpened = DispatchSemaphore(value: 0)
    /// The in-flight count at which a publisher waiting for room resumes: an eighth of the window free, so a
    /// burst of acknowledgements costs one wake-up instead of one per message, while seven eighths of the
    /// window stay in flight (the broker never runs dry).
    private let resumeAt: Int
    /// The durable seqs of one acknowledgement batch, reused so acknowledging allocates nothing.
    private let acknowledgedSeqs = Mutex<[UInt64]>([])
    private let finished = Mutex<Bool>(false)
    private let writerFinished = Mutex<Bool>(true)
    /// The agent's time source: the replay pace, the drain deadline, the log's record times.
    private let clock: any AgentClock
    private let drive: Drive

    /// What the publishing loop keeps between turns. Only the loop's turns touch it (one thread at a time).
    private struct LoopState {
        var lastErrorLog = -Double.infinity
        var invalidTopicsLogged = Set<Int>()
        var bucket: TokenBucket
        var knownTopics: [KnownTopic?] = []
    }

    /// What the durable writer keeps between turns.
    private struct WriterState {
        var lastMaintenance: Double
        var invalidTopicsLogged = Set<Int>()
    }

    private let loopState: Mutex<LoopState>
    private let writerState: Mutex<WriterState>

    package init(
        outbox: Outbox,
        topics: TopicTable,
        broker: BrokerClient,
        window: Int,
        durable: Durable? = nil,
        clock: any AgentClock = SystemClock(),
        drive: Drive = .threads,
        logger: Logger
    ) {
        self.outbox = outbox
        self.topics = topics
        self.broker = broker
        self.window = max(1, window)
        resumeAt = self.window - max(1, self.window / 8)
        durableSlot = Mutex(durable)
        self.clock = clock
        self.drive = drive
        self.logger = logger
        loopState = Mutex(LoopState(bucket: TokenBucket(pacing: durable?.replayRate ?? 1)))
        writerState = Mutex(WriterState(lastMaintenance: clock.monotonicSeconds()))
        acknowledgedSeqs.withLock { $0.reserveCapacity(self.window) }
    }

    package func start() {
        broker.setAcknowledgementHandler(self)
        running.store(true, ordering: .sequentiallyConsistent)
        if durable != nil {
            writing.store(true, ordering: .sequentiallyConsistent)
            writerFinished.withLock { $0 = false }
        }
        guard drive == .threads else { return }
        let thread = Thread { [self] in
            self.loop()
            self.finished.withLock { $0 = true }
        }
        thread.name = "motion-agent.publisher"
        thread.start()
        if let durable { startWriter(durable) }
    }

    private func startWriter(_ durable: Durable) {
        let writer = Thread { [self] in
            self.writeLoop(durable)
            self.writerFinished.withLock { $0 = true }
        }
        writer.name = "motion-agent.outbox-writer"
        writer.start()
    }

    /// Gives the publisher its durable half after it was made (once; false when it already has one): the log's
    /// records go out ahead of the memory outbox from the next turn, and the writer starts moving the staging
    /// ring into the log.
    @discardableResult
    package func attachDurable(_ durable: Durable) -> Bool {
        let attached = durableSlot.withLock { slot -> Bool in
            guard slot == nil else { return false }
            slot = durable
            return true
        }
        guard attached else { return false }
        loopState.withLock { $0.bucket = TokenBucket(pacing: durable.replayRate) }
        if running.load(ordering: .acquiring) {
            writing.store(true, ordering: .sequentiallyConsistent)
            writerFinished.withLock { $0 = false }
            if drive == .threads { startWriter(durable) }
        }
        return true
    }

    /// Stops the threads after they have handed over what they can within `timeout` seconds while connected;
    /// everything staged for the durable log is written to it, and its cursor saved.
    package func stop(drainTimeout timeout: Double) async {
        let deadline = clock.monotonicSeconds() + timeout
        while isConnected && hasUnsent && clock.monotonicSeconds() < deadline {
            // Cancelled rather than shut down: no draining (a cancelled sleep returns at once, and this loop
            // would spin until the deadline). What is left stays in the outbox, or in the durable log.
            guard (try? await clock.sleep(seconds: 0.01)) != nil else { break }
        }
        running.store(false, ordering: .sequentiallyConsistent)
        outbox.wake()
        wakeWindowWaiter()
        if drive == .turns { finished.withLock { $0 = true } }
        while !finished.withLock({ $0 }) { await waitForThread() }
        if let durable {
            writing.store(false, ordering: .sequentiallyConsistent)
            durable.staging.wake()
            if drive == .turns {
                // The writer's last turns, here: everything staged goes into the log.
                while writeTurn() == .wrote {}
                writerFinished.withLock { $0 = true }
            }
            while !writerFinished.withLock({ $0 }) { await waitForThread() }
            durable.log.close()
        }
    }

    /// A moment for a thread to finish its turn (threads drive only; turns finish at once). A cancelled task's
    /// sleep returns at once, so then the calling thread sleeps instead: the thread ends within its current turn.
    private func waitForThread() async {
        if (try? await clock.sleep(seconds: 0.005)) == nil { Self.pause() }
    }

    /// A blocking millisecond, for a cancelled task that must still wait for a thread.
    private static func pause() { Thread.sleep(forTimeInterval: 0.001) }

    /// Whether a publishing turn could hand anything over: messages queued in memory, staged, or in the durable
    /// log's backlog.
    package var hasWork: Bool {
        if !outbox.isEmpty { return true }
        guard let durable else { return false }
        return !durable.staging.isEmpty || durable.log.snapshot.backlog > 0
    }

    /// Whether the durable writer has work a turn would do: messages staged, or the log's upkeep.
    package var hasDurableWork: Bool {
        guard let durable else { return false }
        return !durable.staging.isEmpty || durable.log.needsMaintenance
    }

    /// Whether the publishing loop still runs (between `start` and `stop`).
    package var isRunning: Bool { running.load(ordering: .acquiring) }

    private var hasUnsent: Bool {
        if !outbox.isEmpty { return true }
        guard let durable else { return false }
        return !durable.staging.isEmpty || durable.log.snapshot.depth > 0
    }

    package var isConnected: Bool { connected.load(ordering: .acquiring) }

    /// The connection came up or went down.
    package func setConnected(_ up: Bool) {
        connected.store(up, ordering: .releasing)
        // A lost connection returns the window: libmosquitto resends its in-flight messages itself, and
        // their acknowledgements still find their seqs by message id.
        if !up { inFlight.withLock { $0.window = 0 } }
        outbox.wake()
        wakeWindowWaiter()
    }

    package func brokerAcknowledged(_ messageIDs: ArraySlice<Int32>) {
        acknowledge(contentsOf: messageIDs)
    }

    /// The broker acknowledged these QoS > 0 messages: their window slots return (one wake-up for the batch)
    /// and their durable seqs advance the log's cursor (one lock for the batch). Unknown ids are ignored.
    package func acknowledge<IDs: Sequence<Int32>>(contentsOf messageIDs: IDs) {
        // The scratch lock orders batches (acknowledgements from a connection's thread, or a test) and is
        // taken only here, so holding it across the other two locks cannot deadlock.
        acknowledgedSeqs.withLock { seqs in
            seqs.removeAll(keepingCapacity: true)
            let wake = inFlight.withLock { state in
                var matched = false
                for messageID in messageIDs {
                    guard let seq = state.seqs.removeValue(forKey: messageID) else { continue }
                    matched = true
                    state.window = max(0, state.window - 1)
                    if seq > 0 { seqs.append(seq) }
                }
                return matched && state.takeWaiter(if: state.window <= resumeAt)
            }
            if wake { windowOpened.signal() }
            if !seqs.isEmpty, let durable { durable.log.acknowledge(contentsOf: seqs) }
        }
    }

    private func wakeWindowWaiter() {
        if inFlight.withLock({ $0.takeWaiter() }) { windowOpened.signal() }
    }

    /// Sleeps until acknowledgements free room in a full window (or the connection or `running` changes);
    /// at most 100 ms, so a lost acknowledgement cannot stall the thread for good.
    private func waitForWindow() {
        let full = inFlight.withLock { state in
            guard state.window >= window else { return false }
            state.publisherWaiting = true
            return true
        }
        guard full, running.load(ordering: .acquiring), connected.load(ordering: .acquiring) else { return }
        _ = windowOpened.wait(timeout: .now() + .milliseconds(100))
    }

    /// The durable log's and the staging ring's counters, when there is a log.
    package var durableCounters: DurableLog.Counters? {
        guard let durable else { return nil }
        var counters = durable.log.snapshot
        let staged = durable.staging.snapshot
        counters.dropped += staged.droppedOverflow + staged.droppedExpired
        counters.expired += staged.droppedExpired
        counters.rejected += staged.rejected
        return counters
    }

    /// Hands `payload` to the client and remembers its message id under the same lock the acknowledgement
    /// takes, so an acknowledgement can never overtake its registration. QoS 0 messages are never
    /// acknowledged, so they skip the lock.
    private func send(
        topic: String,
        payload: UnsafeRawBufferPointer,
        qos: Int,
        retain: Bool,
        expirySeconds: UInt32,
        seq: UInt64
    ) throws(BrokerError) {
        if qos == 0 {
            _ = try broker.publish(
                topic: topic,
                payload: payload,
                qos: 0,
                retain: retain,
                expirySeconds: expirySeconds
            )
            return
        }
        try inFlight.withLock { (state) throws(BrokerError) in
            let id = try broker.publish(
                topic: topic,
                payload: payload,
                qos: qos,
                retain: retain,
                expirySeconds: expirySeconds
            )
            if qos > 0 {
                state.seqs[id] = seq
                state.window += 1
            }
        }
    }

    private var windowFull: Bool { inFlight.withLock { $0.window } >= window }

    /// The publisher thread: turns until `stop`, sleeping as each turn's outcome says. Without a durable log,
    /// enqueue, a connection change and stop all wake the outbox's wait: its timeout is only a safety net (it
    /// was 0.2 s, 5 of an idle agent's ~42 wake-ups a second). The durable log's writer does not signal, so its
    /// records are polled every 20 ms.
    private func loop() {
        while running.load(ordering: .acquiring) {
            let blocking = durable == nil ? 2 : 0.02
            switch publishTurn(waitingUpTo: blocking) {
            case .sent: continue
            case .waitingForConnection: Thread.sleep(forTimeInterval: 0.002)
            case .windowFull: waitForWindow()
            case .paced, .idle: Thread.sleep(forTimeInterval: 0)
            }
        }
    }

    /// One turn of the publishing loop, without blocking: the durable log's records first (in seq order, at the
    /// replay pace), then the oldest message of the memory outbox.
    package func publishTurn() -> PublishTurn { publishTurn(waitingUpTo: 0) }

    /// One turn; the memory outbox may be waited on for up to `timeout` seconds when nothing else was sent.
    private func publishTurn(waitingUpTo timeout: Double) -> PublishTurn {
        loopState.withLock { state in
            var disconnected = false
            var sentDurable = false
            var windowBlocked = false
            var pacedUntil: Double?
            if let durable, connected.load(ordering: .acquiring) {
                (sentDurable, windowBlocked, pacedUntil) = publishDurable(durable, state: &state)
            }
            let got = outbox.withOldest(timeout: sentDurable || windowBlocked ? 0 : timeout) { message in
                guard connected.load(ordering: .acquiring) else {
                    disconnected = true
                    return .keep
                }
                if message.qos > 0 && windowFull {
                    windowBlocked = true
                    return .keep
                }
                guard let known = knownTopic(message.topicID, in: &state.knownTopics) else { return .failed }
                let topic = known.topic
                let problem =
                    known.problem
                    ?? (message.payload.count > DurableLog.maxPayloadBytes
                        ? DurableLog.problem(topic: topic, payloadCount: message.payload.count) : nil)
                if let problem {
                    if state.invalidTopicsLogged.insert(message.topicID).inserted {
                        logger.error("refusing messages for \(topic): \(problem) (logged once per topic)")
                    }
                    return .failed
                }
                do throws(BrokerError) {
                    try send(
                        topic: topic,
                        payload: message.payload,
                        qos: message.qos,
                        retain: message.retain,
                        expirySeconds: message.expirySeconds,
                        seq: 0
                    )
                    return .published
                } catch {
                    let now = clock.monotonicSeconds()
                    if now - state.lastErrorLog > 5 {
                        state.lastErrorLog = now
                        logger.warning("publish to \(topic) failed: \(error)")
                    }
                    // Invalid messages are dropped (counted); anything else waits for the connection.
                    if error.isPermanent { return .failed }
                    disconnected = true
                    return .keep
                }
            }
            if got || sentDurable { return .sent }
            if disconnected { return .waitingForConnection }
            if windowBlocked { return .windowFull }
            if let pacedUntil { return .paced(untilMonotonic: pacedUntil) }
            return .idle
        }
    }

    /// A topic as the publisher thread resolved it, and why it can never be published (nil when it can).
    private struct KnownTopic {
        var topic: String
        var problem: String?
    }

    /// The topic of `id`, from the publisher thread's own copy of the table: the table's lock, a String
    /// retain and the topic check are paid once per topic instead of once per message (ids are never reused).
    private func knownTopic(_ id: Int, in known: inout [KnownTopic?]) -> KnownTopic? {
        if id >= 0, id < known.count, let topic = known[id] { return topic }
        guard let topic = topics.topic(id) else { return nil }
        if id >= known.count { known.append(contentsOf: repeatElement(nil, count: id + 1 - known.count)) }
        let resolved = KnownTopic(topic: topic, problem: DurableLog.problem(topic: topic, payloadCount: 0))
        known[id] = resolved
        return resolved
    }

    /// Sends up to 64 records of the durable log in order while the window and the replay rate allow;
    /// returns whether it sent any, whether it stopped at a full window, and when the replay pace allows the
    /// next record when it stopped for the pace.
    private func publishDurable(
        _ durable: Durable,
        state: inout LoopState
    ) -> (sent: Bool, windowFull: Bool, pacedUntil: Double?) {
        var sent = 0
        while sent < 64, connected.load(ordering: .acquiring) {
            if windowFull { return (sent > 0, durable.log.snapshot.backlog > 0, nil) }
            let monotonic = clock.monotonicSeconds()
            guard state.bucket.take(now: monotonic) else {
                let paced = durable.log.snapshot.backlog > 0 ? monotonic + 1 / state.bucket.rate : nil
                return (sent > 0, false, paced)
            }
            let now = clock.realtimeMilliseconds()
            guard let record = durable.log.next(nowMillis: now) else {
                state.bucket.refund()
                break
            }
            guard
                let expiry = DurableLog.remainingExpiry(
                    ofRecordAt: record.timeMillis,
                    expirySeconds: topics.expirySeconds(ofTopic: record.topic),
                    nowMillis: now
                )
            else {
                // Past its stream's expiry_s: stale data is not replayed, and costs no replay token.
                durable.log.discardExpired(record.seq)
                state.bucket.refund()
                continue
            }
            let outcome: Result<Void, BrokerError> = record.payload.withUnsafeBytes { raw in
                do throws(BrokerError) {
                    try send(
                        topic: record.topic,
                        payload: raw,
                        qos: record.qos,
                        retain: record.retain,
                        expirySeconds: expiry,
                        seq: record.seq
                    )
                    return .success(())
                } catch {
                    return .failure(error)
                }
            }
            do throws(BrokerError) {
                try outcome.get()
                durable.log.markPublished(record.seq)
                sent += 1
            } catch {
                state.bucket.refund()
                let now = clock.monotonicSeconds()
                if now - state.lastErrorLog > 5 {
                    state.lastErrorLog = now
                    logger.warning("publish to \(record.topic) failed: \(error)")
                }
                if error.isPermanent {
                    // Never sendable: step over it so it cannot block the log.
                    durable.log.markPublished(record.seq)
                    durable.log.acknowledge(record.seq)
                    continue
                }
                break
            }
        }
        return (sent > 0, false, nil)
    }

    /// The writer thread: moves staged durable messages into the log as soon as they arrive and keeps the
    /// cursor file current (at most every 100 ms). Runs until `stop`, then empties the staging ring.
    private func writeLoop(_ durable: Durable) {
        while true {
            let keepGoing = writing.load(ordering: .acquiring)
            if writeTurn(waitingUpTo: keepGoing ? 0.1 : 0) == .wrote { continue }
            if !keepGoing { return }
        }
    }

    /// One turn of the durable writer, without blocking: the oldest staged message into the log, and the log's
    /// upkeep when it is due. Without a durable log there is nothing to do.
    package func writeTurn() -> WriteTurn { writeTurn(waitingUpTo: 0) }

    private func writeTurn(waitingUpTo timeout: Double) -> WriteTurn {
        guard let durable else { return .idle(maintenanceDueMonotonic: .infinity) }
        return writerState.withLock { state in
            let got = durable.staging.withOldest(timeout: timeout) { message in
                guard let topic = topics.topic(message.topicID) else { return .failed }
                do throws(DurableLog.Failure) {
                    try durable.log.append(
                        topic: topic,
                        qos: message.qos,
                        retain: message.retain,
                        payload: message.payload,
                        nowMillis: clock.realtimeMilliseconds()
                    )
                } catch {
                    // Every other failure is the log's storage (a full file system, a failed write), which the log
                    // reports itself when it starts or changes kind; logging it here too said it twice, then every
                    // 5 s while it lasted.
                    if DurableLog.problem(topic: topic, payloadCount: message.payload.count) != nil,
                        state.invalidTopicsLogged.insert(message.topicID).inserted
                    {
                        logger.error("durable outbox: refusing messages for \(topic): \(error) (logged once per topic)")
                    }
                    return .failed
                }
                return .published
            }
            if got { outbox.wake() }
            let now = clock.monotonicSeconds()
            if now - state.lastMaintenance >= 0.1 {
                state.lastMaintenance = now
                durable.log.maintain(nowMillis: clock.realtimeMilliseconds())
            }
            return got ? .wrote : .idle(maintenanceDueMonotonic: state.lastMaintenance + 0.1)
        }
    }

}
