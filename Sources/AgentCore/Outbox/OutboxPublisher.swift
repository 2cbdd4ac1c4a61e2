import Foundation
import Logging
import Synchronization

/// Drains the outbox into the MQTT client on its own thread, only while the broker is connected, keeping at
/// most `window` QoS > 0 messages unacknowledged so libmosquitto's own queue (unbounded) stays small.
public final class OutboxPublisher: Sendable {
    private let outbox: Outbox
    private let topics: TopicTable
    private let broker: BrokerClient
    private let window: Int
    private let logger: Logger
    private let connected = Atomic<Bool>(false)
    private let running = Atomic<Bool>(false)
    private let unacknowledged = Atomic<Int>(0)
    private let finished = Mutex<Bool>(false)

    public init(outbox: Outbox, topics: TopicTable, broker: BrokerClient, window: Int, logger: Logger) {
        self.outbox = outbox
        self.topics = topics
        self.broker = broker
        self.window = max(1, window)
        self.logger = logger
    }

    public func start() {
        running.store(true, ordering: .sequentiallyConsistent)
        let thread = Thread { [self] in
            self.loop()
            self.finished.withLock { $0 = true }
        }
        thread.name = "motion-agent.publisher"
        thread.start()
    }

    /// Stops the thread after it has handed over what it can within `timeout` seconds while connected.
    public func stop(drainTimeout timeout: Double) async {
        let deadline = WallClock.monotonicNow() + timeout
        while isConnected && !outbox.isEmpty && WallClock.monotonicNow() < deadline {
            try? await Task.sleep(for: .milliseconds(10))
        }
        running.store(false, ordering: .sequentiallyConsistent)
        outbox.wake()
        while !finished.withLock({ $0 }) {
            try? await Task.sleep(for: .milliseconds(5))
        }
    }

    public var isConnected: Bool { connected.load(ordering: .acquiring) }

    /// The connection came up or went down.
    public func setConnected(_ up: Bool) {
        connected.store(up, ordering: .releasing)
        // A lost connection returns the window: libmosquitto resends its in-flight messages itself.
        if !up { unacknowledged.store(0, ordering: .relaxed) }
        outbox.wake()
    }

    /// The broker acknowledged a QoS > 0 message.
    public func acknowledged() {
        let previous = unacknowledged.wrappingSubtract(1, ordering: .relaxed).oldValue
        if previous <= 0 { unacknowledged.store(0, ordering: .relaxed) }
    }

    private func loop() {
        var lastErrorLog = -Double.infinity
        while running.load(ordering: .acquiring) {
            var idle = false
            let got = outbox.withOldest(timeout: 0.2) { message in
                guard connected.load(ordering: .acquiring) else {
                    idle = true
                    return .keep
                }
                if message.qos > 0 && unacknowledged.load(ordering: .relaxed) >= window {
                    idle = true
                    return .keep
                }
                guard let topic = topics.topic(message.topicID) else { return .failed }
                do throws(BrokerError) {
                    _ = try broker.publish(topic: topic, payload: message.payload, qos: message.qos, retain: message.retain)
                    if message.qos > 0 { unacknowledged.wrappingAdd(1, ordering: .relaxed) }
                    return .published
                } catch {
                    let now = WallClock.monotonicNow()
                    if now - lastErrorLog > 5 {
                        lastErrorLog = now
                        logger.warning("publish to \(topic) failed: \(error)")
                    }
                    // Invalid messages are dropped (counted); anything else waits for the connection.
                    if Self.isPermanent(error.code) { return .failed }
                    idle = true
                    return .keep
                }
            }
            if idle || !got {
                Thread.sleep(forTimeInterval: idle ? 0.002 : 0)
            }
        }
    }

    /// libmosquitto error codes that mean "this message can never be sent" (mosquitto.h, 2.0.11):
    /// MOSQ_ERR_INVAL 3, MOSQ_ERR_PAYLOAD_SIZE 9, MOSQ_ERR_MALFORMED_UTF8 18, MOSQ_ERR_QOS_NOT_SUPPORTED 24,
    /// MOSQ_ERR_OVERSIZE_PACKET 25.
    static func isPermanent(_ code: Int) -> Bool {
        [3, 9, 18, 24, 25].contains(code)
    }
}
