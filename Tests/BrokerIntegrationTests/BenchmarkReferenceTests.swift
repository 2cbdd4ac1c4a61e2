import TestSupport
import Testing

@testable import MosquittoTransport

/// The bare libmosquitto publisher and subscriber the benchmarks measure the agent against, on a real broker:
/// if they lost or miscounted messages, every publish ratio and latency reference would be wrong.
@Suite(.timeLimit(.minutes(5))) struct BenchmarkReferenceTests {
    @Test func qos1RunArrivesWhole() async throws {
        let broker = try await MosquittoBroker.started(options: .benchmark())
        let subscriber = try BareSubscriber(host: broker.host, port: broker.port, clientID: "reference-sub")
        try subscriber.subscribe("bench/#", qos: 1)
        let publisher = try BarePublisher(host: broker.host, port: broker.port, clientID: "reference-pub", window: 10)
        subscriber.reset(recordLatencies: false)
        let payload = [UInt8](repeating: UInt8(ascii: "x"), count: 200)
        // A limit below the count, so the publisher waits for acknowledgements many times over.
        try payload.withUnsafeBytes { bytes in
            try publisher.publish(topic: "bench/bare", payload: bytes, qos: 1, count: 2_000, limit: 10)
        }
        _ = subscriber.wait(for: 2_000, timeout: 30)
        #expect(subscriber.count == 2_000)
        #expect(subscriber.firstReceiptNanoseconds != nil)
        publisher.close()
        subscriber.close()
        await broker.stop()
    }

    @Test func pacedMessagesCarryTheirLatency() async throws {
        let broker = try await MosquittoBroker.started(options: .benchmark())
        let subscriber = try BareSubscriber(
            host: broker.host,
            port: broker.port,
            clientID: "reference-latency",
            latencyCapacity: 100
        )
        try subscriber.subscribe("bench/paced", qos: 0)
        let publisher = try BarePublisher(host: broker.host, port: broker.port, clientID: "reference-paced", window: 10)
        subscriber.reset(recordLatencies: true)
        let before = BenchmarkClock.nanoseconds()
        try publisher.publishPaced(topic: "bench/paced", qos: 0, rateHz: 200, seconds: 0.1, burst: 2)
        _ = subscriber.wait(for: 40, timeout: 30)
        let elapsed = Int64(BenchmarkClock.nanoseconds() - before)
        let latencies = subscriber.latencies()
        #expect(subscriber.count == 40)
        #expect(latencies.count == 40)
        // Each one is receipt minus its stamp, both taken inside this window on one clock.
        #expect(latencies.allSatisfy { $0 > 0 && $0 < elapsed })
        publisher.close()
        subscriber.close()
        await broker.stop()
    }

    @Test func stampRoundTripsThroughTheSubscribersParser() {
        let buffer = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: 96)
        defer { buffer.deallocate() }
        let length = BarePublisher.stamp(sequence: 42, nanoseconds: 1_234_000_000_567, into: buffer)
        let text = String(decoding: buffer.prefix(length), as: UTF8.self)
        #expect(text == #"{"seq":42,"timestamp":1234.000000567}"#)
        let seconds = BareSubscriber.timestamp(in: UnsafeRawBufferPointer(start: buffer.baseAddress, count: length))
        #expect(seconds == 1234.000000567)
        #expect(BareSubscriber.timestamp(in: UnsafeRawBufferPointer(start: buffer.baseAddress, count: 10)) == nil)
    }
}
