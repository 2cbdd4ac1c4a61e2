import AgentConfig
import AgentPipeline
import AgentPorts
import AgentRuntime
import ArgumentParser
import Foundation
import Harness
import Logging
import MosquittoTransport
import MotionWire
import Platform
import Simulation

/// Latency from a sample's timestamp (CLOCK_MONOTONIC, stamped by the simulated source at acquisition) to
/// its receipt by a subscriber in this process, through the real agent: SimulatedSensorSource → its services
/// (hub, streams, outbox, publisher, MosquittoClient) → mosquitto on loopback → subscriber.
struct EndToEndLatency: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "latency",
        abstract: "Sample → subscriber latency p50/p99 through the agent at 200 Hz and 1 kHz."
    )

    @Option(help: "Seconds measured per rate (after 2 s of warm-up).") var seconds = 10.0
    @Option(parsing: .upToNextOption, help: "Input rates, Hz.") var rates: [Double] = [200, 1000]

    @Flag(help: "Turn Nagle off on the broker's listener (set_tcp_nodelay true) to separate its share of the tail.")
    var brokerNoDelay = false

    func run() async throws {
        BenchRow.printTable(
            "End-to-end latency (accelerometer and device motion at the input rate, QoS 0)",
            try await Self.measure(rates: rates, seconds: seconds, brokerNoDelay: brokerNoDelay)
        )
    }

    static func measure(rates: [Double], seconds: Double, brokerNoDelay: Bool = false) async throws -> [BenchRow] {
        try await MosquittoBroker.withStarted(options: .benchmark(tcpNoDelay: brokerNoDelay)) { broker in
            try await measure(broker, rates: rates, seconds: seconds, brokerNoDelay: brokerNoDelay)
        }
    }

    private static func measure(
        _ broker: MosquittoBroker,
        rates: [Double],
        seconds: Double,
        brokerNoDelay: Bool
    ) async throws -> [BenchRow] {
        var rows: [BenchRow] = []
        for rate in rates {
            let capacity = Int(rate * seconds * 3) + 1000
            let subscriber = try BareSubscriber(
                host: broker.host,
                port: broker.port,
                clientID: "bench-latency-\(Int(rate))",
                latencyCapacity: capacity
            )
            let device = "bench-latency-\(Int(rate))"
            let scheme = TopicScheme(template: TopicSettings().root, device: device)
            try subscriber.subscribe(scheme.stream(.accelerometer), qos: 0)
            try subscriber.subscribe(scheme.stream(.deviceMotion), qos: 0)
            var configuration = AgentConfiguration()
            configuration.device.id = device
            configuration.mqtt.host = broker.host
            configuration.mqtt.port = broker.port
            configuration.control.persist = false
            configuration.streams[.accelerometer] = StreamSettings(enabled: true, rateHz: rate, qos: 0, retain: false)
            configuration.streams[.deviceMotion] = StreamSettings(enabled: true, rateHz: rate, qos: 0, retain: false)
            var logger = Logger(label: "motion-bench.latency")
            logger.logLevel = .error
            let state = StateFiles(path: broker.directory + "/state-\(Int(rate))")
            let source = try SimulatedSensorSource(scenario: .walking, seed: 1, rateHz: rate, logger: logger)
            let agent = AgentBuilder(
                configuration: configuration,
                source: source,
                broker: MosquittoClient(logger: logger),
                state: state,
                password: nil,
                host: LinuxHost(state: state),
                logger: logger
            ).build().serviceGroup(logger: logger)
            let task = Task { try await agent.run() }
            try await Task.sleep(for: .seconds(2))
            subscriber.reset(recordLatencies: true)
            try await Task.sleep(for: .seconds(seconds))
            let latencies = subscriber.latencies().map { Double($0) / 1e6 }.sorted()
            let received = subscriber.count
            task.cancel()
            _ = await task.result
            let p50 = Statistics.percentile(latencies, 50)
            let p99 = Statistics.percentile(latencies, 99)
            let label = "\(Int(rate)) Hz" + (brokerNoDelay ? " (broker nodelay)" : "")
            rows.append(BenchRow(name: "latency \(label) p50", value: String(format: "%.3f ms", p50)))
            rows.append(
                BenchRow(
                    name: "latency \(label) p99",
                    value: String(format: "%.3f ms", p99),
                    target: "< 5 ms",
                    met: p99 < 5
                )
            )
            // The same subscriber and broker fed by the bare library at the same rate: what the machine and
            // loopback alone cost.
            // Two messages per tick like the agent here (accelerometer + device motion); with and without Nagle.
            for (burst, nodelay) in [(1, false), (2, false), (2, true)] {
                let bare = try bareLatencies(broker, rate: rate, seconds: seconds, burst: burst, noDelay: nodelay)
                rows.append(
                    BenchRow(
                        name: "latency \(label) bare, \(burst)/tick\(nodelay ? ", TCP_NODELAY" : "") p50 / p99",
                        value: String(
                            format: "%.3f / %.3f ms",
                            Statistics.percentile(bare, 50),
                            Statistics.percentile(bare, 99)
                        ),
                        target: String(format: "max %.3f ms, %d messages", bare.last ?? .nan, bare.count)
                    )
                )
            }
            rows.append(
                BenchRow(
                    name: "latency \(label) max / messages",
                    value: String(format: "%.3f ms / %llu", latencies.last ?? .nan, received),
                    target: String(format: "expected ≈ %.0f", 2 * rate * seconds)
                )
            )
        }
        return rows
    }

    /// Latencies (ms, sorted) of the bare publisher stamping CLOCK_MONOTONIC at `rate` for `seconds`.
    static func bareLatencies(
        _ broker: MosquittoBroker,
        rate: Double,
        seconds: Double,
        burst: Int,
        noDelay: Bool
    ) throws -> [Double] {
        let subscriber = try BareSubscriber(
            host: broker.host,
            port: broker.port,
            clientID: "bench-latency-bare",
            latencyCapacity: Int(rate * seconds) * burst + 1000
        )
        try subscriber.subscribe("bench/paced", qos: 0)
        let publisher = try BarePublisher(
            host: broker.host,
            port: broker.port,
            clientID: "bench-paced",
            window: 100,
            noDelay: noDelay
        )
        defer { publisher.close() }
        subscriber.reset(recordLatencies: true)
        try publisher.publishPaced(topic: "bench/paced", qos: 0, rateHz: rate, seconds: seconds, burst: burst)
        _ = subscriber.wait(for: UInt64(rate * seconds) * UInt64(burst), timeout: 2)
        return subscriber.latencies().map { Double($0) / 1e6 }.sorted()
    }
}
