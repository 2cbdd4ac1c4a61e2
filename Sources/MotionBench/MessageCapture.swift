import AgentCore
import AgentPorts
import CBenchSupport
import Logging
import MosquittoTransport
import Synchronization

/// A subscriber that keeps every message it receives — topic, payload and CLOCK_MONOTONIC at receipt — so a
/// benchmark can decode the payloads after its measured window. The C `BenchSubscriber` only counts; decoding
/// batches needs the bytes.
///
/// The payloads are kept, not decoded, while the agent runs, so the bench competes with the agent for the
/// two shared cores as little as possible. Receipt is stamped when the message leaves the client's event
/// stream, microseconds after the network thread read it: enough for windows of seconds.
final class MessageCapture: Sendable {
    struct Message: Sendable {
        var topic: String
        var payload: [UInt8]
        /// CLOCK_MONOTONIC at receipt, ns.
        var receivedNanoseconds: UInt64
    }

    struct CaptureError: Error, CustomStringConvertible {
        var description: String
    }

    /// The received messages, shared with the consuming task.
    private final class Store: Sendable {
        let list = Mutex<[Message]>([])
    }

    private let client: MosquittoClient
    private let store: Store
    private let consumer: Task<Void, Never>

    /// Connects to `broker` (MQTT 5, clean session) and subscribes to `filters` at `qos`.
    init(broker: BenchBroker, clientID: String, filters: [String], qos: Int) async throws {
        var logger = Logger(label: "motion-bench.capture")
        logger.logLevel = .error
        // Room for a whole run's backlog should the consumer stall: a dropped message would read as a gap.
        let client = MosquittoClient(logger: logger, eventBacklogLimit: 1 << 20)
        let store = Store()
        self.client = client
        self.store = store
        consumer = Task {
            for await event in client.events {
                guard case .message(let message) = event else { continue }
                let now = bench_monotonic_ns()
                store.list.withLock {
                    $0.append(Message(topic: message.topic, payload: message.payload, receivedNanoseconds: now))
                }
            }
        }
        do {
            try client.connect(BrokerConnectOptions(host: broker.host, port: broker.port, clientID: clientID))
            let deadline = bench_monotonic_ns() + 10_000_000_000
            while !client.isConnected {
                guard bench_monotonic_ns() < deadline else {
                    throw CaptureError(
                        description:
                            "the capture subscriber got no CONNACK from \(broker.host):\(broker.port) within 10 s"
                    )
                }
                try await Task.sleep(for: .milliseconds(5))
            }
            // The client reports no SUBACK; callers wait for the first message on each topic instead.
            try client.subscribe(filters, qos: qos)
        } catch {
            consumer.cancel()
            throw error
        }
    }

    /// Receipt time of the first message on `topic`; nil before one arrived.
    func firstReceipt(topic: String) -> UInt64? {
        store.list.withLock { list in list.first { $0.topic == topic }?.receivedNanoseconds }
    }

    /// Messages received in [`start`, `end`), in arrival order.
    func messages(from start: UInt64, to end: UInt64) -> [Message] {
        store.list.withLock { list in
            list.filter { $0.receivedNanoseconds >= start && $0.receivedNanoseconds < end }
        }
    }

    /// Messages the client dropped because this consumer fell `eventBacklogLimit` behind (should be 0).
    var droppedCount: Int { client.droppedInboundCount }

    func stop() async {
        await client.disconnect(flushTimeout: 1)
        consumer.cancel()
    }
}
