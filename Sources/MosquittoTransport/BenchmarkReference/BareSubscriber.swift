internal import CMosquitto
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The measuring subscriber of the benchmarks: plain libmosquitto, no agent code. It counts what arrives and,
/// for payloads with a sample timestamp (`"timestamp":<seconds on CLOCK_MONOTONIC>`, like the agent's
/// samples), records the latency from the sample to its receipt here. Its callbacks allocate nothing, so the
/// benchmarks' whole-process allocation counts hold only the publishers' and libmosquitto's own.
package final class BareSubscriber {
    /// Latencies recorded since the last reset, in storage allocated once.
    private struct LatencyLog {
        var values: UnsafeMutableBufferPointer<Int64>
        var recorded = 0
        var recording = false
    }

    private let received = Atomic<UInt64>(0)
    private let firstReceipt = Atomic<UInt64>(0)
    /// 0 until CONNACK, then 1 (accepted) or -1 (refused).
    private let connected = Atomic<Int32>(0)
    private let subscriptions = Atomic<Int>(0)
    private let log: Mutex<LatencyLog>
    private let capacity: Int
    private var handle: OpaquePointer?

    /// Connects (MQTT 5, clean session) and waits for CONNACK up to `timeout` seconds.
    ///
    /// - Parameter latencyCapacity: latencies kept between resets; later ones are not recorded.
    package init(host: String, port: Int, clientID: String, latencyCapacity: Int = 0, timeout: Double = 10) throws {
        MosquittoLibrary.ensureInitialized()
        capacity = max(latencyCapacity, 0)
        let values = UnsafeMutableBufferPointer<Int64>.allocate(capacity: max(capacity, 1))
        values.initialize(repeating: 0)
        log = Mutex(LatencyLog(values: values))
        guard let mosq = mosquitto_new(clientID, true, Unmanaged.passUnretained(self).toOpaque()) else {
            throw BenchmarkReferenceError(description: "mosquitto_new failed: out of memory?")
        }
        handle = mosq
        _ = mosquitto_int_option(mosq, MOSQ_OPT_PROTOCOL_VERSION, MQTT_PROTOCOL_V5)
        // Receive as fast as the broker sends: a small receive window would throttle the QoS 1 runs.
        _ = mosquitto_int_option(mosq, MOSQ_OPT_RECEIVE_MAXIMUM, 65535)
        mosquitto_connect_v5_callback_set(mosq) { _, context, code, _, _ in
            guard let subscriber = BareSubscriber.from(context) else { return }
            subscriber.connected.store(code == 0 ? 1 : -1, ordering: .releasing)
        }
        mosquitto_subscribe_v5_callback_set(mosq) { _, context, _, _, _, _ in
            BareSubscriber.from(context)?.subscriptions.add(1, ordering: .releasing)
        }
        mosquitto_message_v5_callback_set(mosq) { _, context, message, _ in
            guard let subscriber = BareSubscriber.from(context), let message else { return }
            subscriber.receive(message.pointee)
        }
        do {
            try ReferenceHandle.connect(mosq, host: host, port: port, client: "subscriber")
        } catch {
            close()
            throw error
        }
        let deadline = BenchmarkClock.nanoseconds() + UInt64(timeout * 1e9)
        while connected.load(ordering: .acquiring) == 0 && BenchmarkClock.nanoseconds() < deadline {
            usleep(1000)
        }
        guard connected.load(ordering: .acquiring) == 1 else {
            close()
            throw BenchmarkReferenceError(
                description: "the subscriber got no CONNACK accepting it from \(host):\(port) within \(timeout) s "
                    + "— check the broker's log"
            )
        }
    }

    deinit {
        close()
        log.withLock { $0.values.deallocate() }
    }

    /// Disconnects and stops the network thread; the callbacks have run for the last time when it returns.
    package func close() {
        guard let mosq = handle else { return }
        handle = nil
        ReferenceHandle.close(mosq)
    }

    /// Subscribes and waits for SUBACK (up to 5 s).
    package func subscribe(_ filter: String, qos: Int) throws {
        guard let mosq = handle else { throw BenchmarkReferenceError(description: "the subscriber is closed") }
        let before = subscriptions.load(ordering: .acquiring)
        let rc = mosquitto_subscribe_v5(mosq, nil, filter, Int32(qos), 0, nil)
        guard rc == MOSQ_ERR_SUCCESS.rawValue else {
            throw BenchmarkReferenceError(description: "subscribing to \(filter): \(MosquittoLibrary.errorText(rc))")
        }
        let deadline = BenchmarkClock.nanoseconds() + 5_000_000_000
        while subscriptions.load(ordering: .acquiring) == before && BenchmarkClock.nanoseconds() < deadline {
            usleep(1000)
        }
        guard subscriptions.load(ordering: .acquiring) > before else {
            throw BenchmarkReferenceError(
                description: "subscribing to \(filter) got no SUBACK within 5 s — check the broker's log"
            )
        }
    }

    /// Messages received since the last reset.
    package var count: UInt64 { received.load(ordering: .acquiring) }

    /// CLOCK_MONOTONIC ns of the first message since the last reset; nil before one arrived.
    package var firstReceiptNanoseconds: UInt64? {
        let value = firstReceipt.load(ordering: .acquiring)
        return value == 0 ? nil : value
    }

    /// Clears the count and the latencies; `recordLatencies` turns latency recording on or off.
    package func reset(recordLatencies: Bool) {
        log.withLock { log in
            log.recorded = 0
            log.recording = recordLatencies
            received.store(0, ordering: .releasing)
            firstReceipt.store(0, ordering: .releasing)
        }
    }

    /// Latencies recorded since the last reset, ns.
    package func latencies() -> [Int64] {
        log.withLock { Array($0.values.prefix($0.recorded)) }
    }

    /// Waits until `target` messages arrived or `timeout` seconds passed; returns CLOCK_MONOTONIC ns then.
    package func wait(for target: UInt64, timeout: Double) -> UInt64 {
        let deadline = BenchmarkClock.nanoseconds() + UInt64(timeout * 1e9)
        while count < target && BenchmarkClock.nanoseconds() < deadline {
            usleep(200)
        }
        return BenchmarkClock.nanoseconds()
    }

    private static func from(_ context: UnsafeMutableRawPointer?) -> BareSubscriber? {
        guard let context else { return nil }
        return Unmanaged<BareSubscriber>.fromOpaque(context).takeUnretainedValue()
    }

    private static let timestampKey: StaticString = "\"timestamp\":"

    /// On the network thread: records the message's latency when it carries a timestamp, then counts it — in
    /// that order, so whoever sees the count (`wait(for:)`) also sees the latency (counted first, a test once read
    /// 40 messages and 39 latencies).
    private func receive(_ message: mosquitto_message) {
        let now = BenchmarkClock.nanoseconds()
        _ = firstReceipt.compareExchange(expected: 0, desired: now, ordering: .acquiringAndReleasing)
        defer { received.add(1, ordering: .releasing) }
        guard message.payloadlen > 0, let base = message.payload,
            log.withLock({ $0.recording }),
            let seconds = Self.timestamp(in: UnsafeRawBufferPointer(start: base, count: Int(message.payloadlen))),
            seconds > 0
        else { return }
        let latency = Int64(bitPattern: now) - Int64(seconds * 1e9)
        log.withLock { log in
            guard log.recorded < capacity else { return }
            log.values[log.recorded] = latency
            log.recorded += 1
        }
    }

    /// The number after `"timestamp":` (up to the next `,` or `}`), parsed with strtod as the C reference did.
    static func timestamp(in payload: UnsafeRawBufferPointer) -> Double? {
        let key = UnsafeRawBufferPointer(start: timestampKey.utf8Start, count: timestampKey.utf8CodeUnitCount)
        guard payload.count >= key.count else { return nil }
        var found: Int?
        for start in 0...(payload.count - key.count) where payload[start] == key[0] {
            if (1..<key.count).allSatisfy({ payload[start + $0] == key[$0] }) {
                found = start + key.count
                break
            }
        }
        guard let first = found else { return nil }
        return withUnsafeTemporaryAllocation(of: CChar.self, capacity: 48) { text in
            var n = 0
            while first + n < payload.count && n < text.count - 1 {
                let byte = payload[first + n]
                if byte == UInt8(ascii: ",") || byte == UInt8(ascii: "}") { break }
                text[n] = CChar(bitPattern: byte)
                n += 1
            }
            text[n] = 0
            return strtod(text.baseAddress!, nil)
        }
    }
}
