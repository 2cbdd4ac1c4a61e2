import AgentPorts
import Foundation
import MosquittoTransport
import Synchronization

/// An MQTT client for end-to-end tests and the benchmarks: connects, subscribes, and collects every message
/// that arrives with its time of receipt, with bounded waits to assert on them.
///
/// The benchmarks keep the payloads, not decoded, while the agent runs, so that they compete with the agent
/// for the shared cores as little as possible. Receipt is stamped when the message leaves the client's event
/// stream, microseconds after the network thread read it: enough for windows of seconds.
package final class CapturingSubscriber: Sendable {
    package let client: MosquittoClient
    private let collected = CollectedBox()
    private final class CollectedBox: Sendable {
        let state = Mutex(Collected())
        func withLock<R>(_ body: (inout Collected) -> R) -> R { state.withLock { body(&$0) } }
    }
    private let pump: Task<Void, Never>
    private let barrier: SubscriptionBarrier

    /// A message and when it arrived.
    package struct Arrival: Sendable {
        package var message: InboundMessage
        /// CLOCK_MONOTONIC at receipt, ns.
        package var receivedNanoseconds: UInt64
        package var topic: String { message.topic }
        package var payload: [UInt8] { message.payload }
    }

    private struct Collected {
        var messages: [InboundMessage] = []
        /// CLOCK_MONOTONIC ns at receipt, one per element of `messages`.
        var receipts: [UInt64] = []
        var connectionEvents: [BrokerEvent] = []
        var probeSeen = false
    }

    package struct Timeout: Error, CustomStringConvertible {
        package var description: String
    }

    /// Connects with `options`, subscribes to `filters` at `qos`, and returns once the subscriptions are in
    /// effect and their retained messages in: its `SubscriptionBarrier` came back.
    ///
    /// - Parameter eventBacklogLimit: messages that may wait for the collecting task before later ones are
    ///   dropped (`droppedCount`); a benchmark that must see every message of a run passes room for all.
    package init(
        options: BrokerConnectOptions,
        filters: [String],
        qos: Int = 1,
        timeout: Double = 10,
        eventBacklogLimit: Int = 16_384
    ) async throws {
        let client = MosquittoClient(eventBacklogLimit: eventBacklogLimit)
        self.client = client
        let barrier = SubscriptionBarrier(topic: "test-subscriber/\(UUID().uuidString)/probe")
        self.barrier = barrier
        let collected = self.collected
        let events = client.events
        pump = Task {
            for await event in events {
                collected.withLock { state in
                    switch event {
                    case .message(let message):
                        if barrier.isReturn(of: message) {
                            state.probeSeen = true
                        } else if message.topic != barrier.topic {
                            state.messages.append(message)
                            state.receipts.append(BenchmarkClock.nanoseconds())
                        }
                    case .connected, .connectFailed, .serverReference, .disconnected:
                        state.connectionEvents.append(event)
                    }
                }
            }
        }
        try client.connect(options)
        try await waitForCondition(timeout: timeout, what: "the connection to \(options.host):\(options.port)") {
            $0.connectionEvents.contains { event in
                if case .connected = event { return true }
                if case .connectFailed = event { return true }
                return false
            }
        }
        if case .connectFailed(_, let reason, _) = connectionEvents.last {
            throw Timeout(description: "test subscriber could not connect: \(reason)")
        }
        try barrier.subscribe(client, to: filters, qos: qos)
        try await waitForCondition(timeout: timeout, what: "the subscription to \(filters)") { $0.probeSeen }
    }

    /// Connects to `broker` with a fresh client id.
    package convenience init(
        broker: MosquittoBroker,
        filters: [String],
        qos: Int = 1,
        protocolVersion: MQTTProtocolVersion = .v5,
        timeout: Double = 10,
        eventBacklogLimit: Int = 16_384
    ) async throws {
        let options = broker.connectOptions(
            clientID: "test-sub-\(UUID().uuidString.prefix(8))",
            protocolVersion: protocolVersion
        )
        try await self.init(
            options: options,
            filters: filters,
            qos: qos,
            timeout: timeout,
            eventBacklogLimit: eventBacklogLimit
        )
    }

    deinit {
        pump.cancel()
    }

    /// Every message received so far (except the probe), in arrival order.
    package var messages: [InboundMessage] { collected.withLock { $0.messages } }

    package func messages(on topic: String) -> [InboundMessage] {
        collected.withLock { $0.messages.filter { $0.topic == topic } }
    }

    /// The newest message on `topic`, found from the end: cheap enough to poll every few milliseconds while
    /// thousands arrive, which copying them all with `messages(on:)` is not.
    package func lastMessage(on topic: String) -> InboundMessage? {
        collected.withLock { $0.messages.last { $0.topic == topic } }
    }

    /// Messages received in [`start`, `end`) (CLOCK_MONOTONIC ns), in arrival order, with their receipt times.
    package func arrivals(from start: UInt64, to end: UInt64) -> [Arrival] {
        collected.withLock { state in
            zip(state.messages, state.receipts).compactMap { message, received in
                received >= start && received < end ? Arrival(message: message, receivedNanoseconds: received) : nil
            }
        }
    }

    /// Receipt time (CLOCK_MONOTONIC ns) of the first message on `topic`; nil before one arrived.
    package func firstReceipt(topic: String) -> UInt64? {
        collected.withLock { state in state.messages.firstIndex { $0.topic == topic }.map { state.receipts[$0] } }
    }

    /// Messages the client dropped because the collecting task fell `eventBacklogLimit` behind.
    package var droppedCount: Int { client.droppedInboundCount }

    /// `.connected`, `.connectFailed` and `.disconnected` events seen so far.
    package var connectionEvents: [BrokerEvent] { collected.withLock { $0.connectionEvents } }

    /// Waits, at most `timeout` seconds, until at least `count` messages arrived (optionally on `topic`);
    /// returns them, or throws naming what did arrive.
    @discardableResult
    package func waitFor(count: Int, on topic: String? = nil, timeout: Double = 10) async throws -> [InboundMessage] {
        try await waitUntil(timeout: timeout, "\(count) message(s)\(topic.map { " on \($0)" } ?? "")") { messages in
            messages.lazy.filter { topic == nil || $0.topic == topic }.count >= count
        }
        return collected.withLock { $0.messages.filter { topic == nil || $0.topic == topic } }
    }

    /// Waits, at most `timeout` seconds, until `predicate` holds for the messages received so far.
    package func waitUntil(
        timeout: Double = 10,
        _ description: String = "the condition",
        _ predicate: @Sendable ([InboundMessage]) -> Bool
    ) async throws {
        try await waitForCondition(timeout: timeout, what: description) { predicate($0.messages) }
    }

    /// Disconnects cleanly (bounded by `flushTimeout` seconds plus the client's own margin).
    package func close(flushTimeout: Double = 1) async {
        await client.disconnect(flushTimeout: flushTimeout)
    }

    private func waitForCondition(
        timeout: Double,
        what: String,
        _ condition: (Collected) -> Bool
    ) async throws {
        // The condition runs under the lock the receiving thread takes: `Polling` spaces costly checks out.
        let held = await Polling.until(timeout: timeout, interval: .milliseconds(10)) {
            collected.withLock { condition($0) }
        }
        if held { return }
        let summary = collected.withLock { state in
            "\(state.messages.count) message(s) on \(Set(state.messages.map(\.topic)).sorted()); events \(state.connectionEvents)"
        }
        throw Timeout(description: "waited \(timeout) s for \(what); got \(summary)")
    }
}
