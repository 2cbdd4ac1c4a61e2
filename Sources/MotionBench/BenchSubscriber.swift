import CBenchSupport

/// The C measuring subscriber (Sources/CBenchSupport/bench_subscriber.c) behind a Swift face.
final class BenchSubscriber {
    private let handle: OpaquePointer
    private let capacity: Int

    init(broker: BenchBroker, clientID: String, latencyCapacity: Int = 0) throws {
        var error = [CChar](repeating: 0, count: 256)
        guard
            let handle = bench_sub_open(
                broker.host,
                Int32(broker.port),
                clientID,
                latencyCapacity,
                10,
                &error,
                error.count
            )
        else {
            throw BenchBroker.StartError(description: BenchBroker.text(error))
        }
        self.handle = handle
        capacity = latencyCapacity
    }

    deinit { bench_sub_close(handle) }

    func subscribe(_ filter: String, qos: Int) throws {
        guard bench_sub_subscribe(handle, filter, Int32(qos)) == 0 else {
            throw BenchBroker.StartError(description: "subscribing to \(filter) got no SUBACK within 5 s")
        }
    }

    var count: UInt64 { bench_sub_count(handle) }
    /// CLOCK_MONOTONIC ns of the first message since the last reset; nil before one arrived.
    var firstReceiptNanoseconds: UInt64? {
        let value = bench_sub_first_receipt_ns(handle)
        return value == 0 ? nil : value
    }

    func reset(recordLatencies: Bool) { bench_sub_reset(handle, recordLatencies ? 1 : 0) }

    /// Latencies recorded since the last reset, ns.
    func latencies() -> [Int64] {
        var out = [Int64](repeating: 0, count: max(capacity, 1))
        let n = out.withUnsafeMutableBufferPointer { bench_sub_latencies(handle, $0.baseAddress!, capacity) }
        return Array(out.prefix(n))
    }

    /// Waits until `target` messages arrived or `timeout` seconds passed; returns the monotonic ns then.
    func wait(for target: UInt64, timeout: Double) -> UInt64 {
        let deadline = bench_monotonic_ns() + UInt64(timeout * 1e9)
        while count < target && bench_monotonic_ns() < deadline {
            usleep(200)
        }
        return bench_monotonic_ns()
    }
}

#if canImport(Glibc)
import Glibc
#endif
