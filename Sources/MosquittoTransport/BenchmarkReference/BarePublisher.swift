internal import CMosquitto

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The bare libmosquitto publisher: what the library does with no agent code around it, the reference the
/// agent's publishing path is measured against (`motion-bench publish` and `latency`). Threaded mode
/// (`mosquitto_loop_start`), MQTT 5 and the in-flight window as the agent's client uses them.
///
/// It calls libmosquitto directly and shares nothing with `MosquittoClient`. The publishing loop keeps the
/// shape of the C reference it replaces — a pthread mutex and condition variable, the state at a fixed
/// address handed to the callbacks as userdata — so that the comparison measures the agent's code, not a
/// different reference.
package final class BarePublisher {
    /// What the network thread and the publishing thread share. The publisher waits for room with the agent's
    /// rule (OutboxPublisher): once `limit` messages are pending it sleeps until an eighth of the limit is
    /// free, so a burst of acknowledgements costs one wake-up, not one per message.
    private struct Shared {
        var lock = pthread_mutex_t()
        var changed = pthread_cond_t()
        /// 0 until CONNACK, then 1 (accepted) or -1 (refused).
        var connected: Int32 = 0
        var connectResult: Int32 = 0
        var pending = 0
        var resumeAt = 0
        var waiting = false
    }

    private let shared: UnsafeMutablePointer<Shared>
    private var handle: OpaquePointer?

    /// Connects and waits for CONNACK up to `timeout` seconds.
    ///
    /// - Parameters:
    ///   - window: libmosquitto's maximum of in-flight QoS > 0 messages.
    ///   - noDelay: TCP_NODELAY on the socket; libmosquitto's default keeps Nagle.
    package init(
        host: String,
        port: Int,
        clientID: String,
        window: Int,
        mqtt5: Bool = true,
        noDelay: Bool = false,
        timeout: Double = 10
    ) throws {
        MosquittoLibrary.ensureInitialized()
        shared = .allocate(capacity: 1)
        shared.initialize(to: Shared())
        pthread_mutex_init(&shared.pointee.lock, nil)
        pthread_cond_init(&shared.pointee.changed, nil)
        guard let mosq = mosquitto_new(clientID, true, UnsafeMutableRawPointer(shared)) else {
            throw BenchmarkReferenceError(description: "mosquitto_new failed: out of memory?")
        }
        handle = mosq
        _ = mosquitto_int_option(mosq, MOSQ_OPT_PROTOCOL_VERSION, mqtt5 ? MQTT_PROTOCOL_V5 : MQTT_PROTOCOL_V311)
        _ = mosquitto_max_inflight_messages_set(mosq, UInt32(window))
        if noDelay { _ = mosquitto_int_option(mosq, MOSQ_OPT_TCP_NODELAY, 1) }
        mosquitto_connect_v5_callback_set(mosq) { _, context, code, _, _ in
            guard let shared = context?.assumingMemoryBound(to: Shared.self) else { return }
            pthread_mutex_lock(&shared.pointee.lock)
            shared.pointee.connected = code == 0 ? 1 : -1
            shared.pointee.connectResult = code
            pthread_cond_broadcast(&shared.pointee.changed)
            pthread_mutex_unlock(&shared.pointee.lock)
        }
        // QoS 0: the message was written to the socket; QoS 1: its PUBACK arrived.
        mosquitto_publish_v5_callback_set(mosq) { _, context, _, _, _ in
            guard let shared = context?.assumingMemoryBound(to: Shared.self) else { return }
            pthread_mutex_lock(&shared.pointee.lock)
            shared.pointee.pending -= 1
            if shared.pointee.waiting && shared.pointee.pending <= shared.pointee.resumeAt {
                pthread_cond_broadcast(&shared.pointee.changed)
            }
            pthread_mutex_unlock(&shared.pointee.lock)
        }
        do {
            try ReferenceHandle.connect(mosq, host: host, port: port, client: "bare publisher")
        } catch {
            close()
            throw error
        }
        var deadline = BenchmarkClock.realtimeDeadline(after: timeout)
        pthread_mutex_lock(&shared.pointee.lock)
        while shared.pointee.connected == 0 {
            if pthread_cond_timedwait(&shared.pointee.changed, &shared.pointee.lock, &deadline) != 0 { break }
        }
        let connected = shared.pointee.connected
        let result = shared.pointee.connectResult
        pthread_mutex_unlock(&shared.pointee.lock)
        guard connected == 1 else {
            close()
            throw BenchmarkReferenceError(
                description: "no CONNACK accepting the bare publisher from \(host):\(port) within \(timeout) s "
                    + "(result \(result)) — check the broker's log"
            )
        }
    }

    deinit {
        close()
        pthread_cond_destroy(&shared.pointee.changed)
        pthread_mutex_destroy(&shared.pointee.lock)
        shared.deinitialize(count: 1)
        shared.deallocate()
    }

    /// Disconnects and stops the network thread; the callbacks have run for the last time when it returns.
    package func close() {
        guard let mosq = handle else { return }
        handle = nil
        ReferenceHandle.close(mosq)
    }

    /// Publishes `count` copies of `payload` to `topic` as fast as the library takes them, keeping at most
    /// `limit` messages unacknowledged (QoS > 0) or unwritten (QoS 0); returns when all are acknowledged or
    /// written.
    package func publish(
        topic: String,
        payload: UnsafeRawBufferPointer,
        qos: Int,
        count: Int,
        limit: Int
    ) throws {
        guard let mosq = handle else { throw BenchmarkReferenceError(description: "the bare publisher is closed") }
        let shared = self.shared
        pthread_mutex_lock(&shared.pointee.lock)
        shared.pointee.resumeAt = limit - max(limit / 8, 1)
        pthread_mutex_unlock(&shared.pointee.lock)
        let length = Int32(payload.count)
        let qos = Int32(qos)
        try topic.withCString { topic in
            for _ in 0..<count {
                pthread_mutex_lock(&shared.pointee.lock)
                if shared.pointee.pending >= limit {
                    shared.pointee.waiting = true
                    while shared.pointee.pending > shared.pointee.resumeAt {
                        pthread_cond_wait(&shared.pointee.changed, &shared.pointee.lock)
                    }
                    shared.pointee.waiting = false
                }
                shared.pointee.pending += 1
                pthread_mutex_unlock(&shared.pointee.lock)
                let rc = mosquitto_publish_v5(mosq, nil, topic, length, payload.baseAddress, qos, false, nil)
                guard rc == MOSQ_ERR_SUCCESS.rawValue else {
                    throw BenchmarkReferenceError(description: "mosquitto_publish: \(MosquittoLibrary.errorText(rc))")
                }
            }
        }
        pthread_mutex_lock(&shared.pointee.lock)
        shared.pointee.resumeAt = 0
        shared.pointee.waiting = true
        while shared.pointee.pending > 0 { pthread_cond_wait(&shared.pointee.changed, &shared.pointee.lock) }
        shared.pointee.waiting = false
        pthread_mutex_unlock(&shared.pointee.lock)
    }

    /// Publishes `{"seq":n,"timestamp":<CLOCK_MONOTONIC s>}` at `rateHz` for `seconds` (absolute deadlines),
    /// `burst` copies back to back per tick (the agent sends one message per stream due on a sample): the bare
    /// library's latency reference.
    package func publishPaced(topic: String, qos: Int, rateHz: Double, seconds: Double, burst: Int) throws {
        guard let mosq = handle else { throw BenchmarkReferenceError(description: "the bare publisher is closed") }
        let count = Int(rateHz * seconds)
        let period = UInt64(1e9 / rateHz)
        var next = BenchmarkClock.nanoseconds()
        try topic.withCString { topic in
            try withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 96) { payload in
                for sequence in 0..<count {
                    next += period
                    var deadline = timespec(tv_sec: Int(next / 1_000_000_000), tv_nsec: Int(next % 1_000_000_000))
                    clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &deadline, nil)
                    let length = Self.stamp(
                        sequence: sequence,
                        nanoseconds: BenchmarkClock.nanoseconds(),
                        into: payload
                    )
                    for _ in 0..<burst {
                        let rc = mosquitto_publish_v5(
                            mosq,
                            nil,
                            topic,
                            Int32(length),
                            payload.baseAddress,
                            Int32(qos),
                            false,
                            nil
                        )
                        guard rc == MOSQ_ERR_SUCCESS.rawValue else {
                            throw BenchmarkReferenceError(
                                description: "mosquitto_publish: \(MosquittoLibrary.errorText(rc))"
                            )
                        }
                    }
                }
            }
        }
    }

    /// Writes `{"seq":<sequence>,"timestamp":<s>.<9 digits>}` into `buffer` without allocating; returns its
    /// length.
    static func stamp(sequence: Int, nanoseconds: UInt64, into buffer: UnsafeMutableBufferPointer<UInt8>) -> Int {
        var end = 0
        func append(_ text: StaticString) {
            for i in 0..<text.utf8CodeUnitCount { buffer[end + i] = text.utf8Start[i] }
            end += text.utf8CodeUnitCount
        }
        func append(_ value: UInt64, minimumDigits: Int) {
            var digits = 0
            var rest = value
            repeat {
                digits += 1
                rest /= 10
            } while rest > 0
            digits = max(digits, minimumDigits)
            rest = value
            for i in stride(from: end + digits - 1, through: end, by: -1) {
                buffer[i] = UInt8(ascii: "0") + UInt8(rest % 10)
                rest /= 10
            }
            end += digits
        }
        append("{\"seq\":")
        append(UInt64(sequence), minimumDigits: 1)
        append(",\"timestamp\":")
        append(nanoseconds / 1_000_000_000, minimumDigits: 1)
        append(".")
        append(nanoseconds % 1_000_000_000, minimumDigits: 9)
        append("}")
        return end
    }
}
