import AgentConfig
import AgentControl
import AgentPipeline
import AgentPorts
import Foundation
import Integrations
import Logging
import MotionWire

/// Every `metrics.interval_s` collects the health counters, publishes them on `{root}/metrics` (QoS 0, not
/// retained: a stale report is worse than none) and writes the Prometheus textfile when one is configured.
/// It runs in its own task, off the per-sample path: reading the counters takes the outbox's and the hub's
/// locks once per interval.
struct MetricsReporter: Sendable {
    private let settings: MetricsSettings
    private let device: String
    private let topic: String
    private let broker: BrokerClient
    private let connections: ConnectionCounters
    private let host: HostSystem
    private let logger: Logger
    private let clock: any AgentClock
    /// When the agent started, on the monotonic clock: the uptime's origin.
    private let started: Double

    init(
        configuration: AgentConfiguration,
        topics: TopicScheme,
        broker: BrokerClient,
        connections: ConnectionCounters,
        host: HostSystem,
        clock: any AgentClock,
        logger: Logger
    ) {
        self.clock = clock
        started = clock.monotonicSeconds()
        settings = configuration.metrics
        device = configuration.device.id
        topic = topics.metrics
        self.broker = broker
        self.connections = connections
        self.host = host
        self.logger = logger
    }

    /// Reports until cancelled, every `interval()` seconds, read again for each report; while it is 0 the
    /// report pauses, looking again every 5 s (a paused agent of a large fleet wakes less; a desired document
    /// that switches metrics on takes effect within those 5 s).
    func run(
        bootCount: UInt64,
        interval: @Sendable () -> Int,
        counters: @Sendable () -> HealthCounters
    ) async {
        var previous = host.processStatistics()
        var previousInstant = clock.monotonicSeconds()
        var lastFileError: String?
        while true {
            let seconds = interval()
            guard (try? await clock.sleep(seconds: Double(seconds > 0 ? seconds : 5))) != nil else { return }
            guard seconds > 0 else { continue }
            let now = clock.monotonicSeconds()
            let current = host.processStatistics()
            let elapsed = now - previousInstant
            var process = AgentMetrics.Process(cpuPercent: 0, cpuSeconds: 0, rssBytes: 0)
            if let current {
                process.cpuSeconds = current.cpuSeconds
                process.rssBytes = current.residentBytes
                if let previous {
                    process.cpuPercent = ProcessStatistics.cpuPercent(from: previous, to: current, seconds: elapsed)
                }
            }
            previous = current
            previousInstant = now
            let metrics = AgentMetrics(
                device: device,
                time: clock.realtimeSeconds(),
                uptimeSeconds: now - started,
                bootCount: bootCount,
                intervalSeconds: seconds,
                counters: counters(),
                connected: broker.isConnected,
                connections: connections,
                process: process
            )
            publish(metrics)
            if let path = settings.prometheusFile {
                do {
                    try host.replaceFile(atPath: path, with: Array(metrics.prometheusText().utf8), mode: 0o644)
                    lastFileError = nil
                } catch {
                    // Once per distinct error, not once per interval. The host writes a fresh temporary file
                    // beside it and renames it over it: node_exporter reads the old file or the new one, never
                    // half of one (its temporary name does not end in .prom, which the collector would read).
                    let message =
                        "\(error) — make its directory writable for the agent's user or change metrics.prometheus_file"
                    if message != lastFileError { logger.error("\(message)") }
                    lastFileError = message
                }
            }
        }
    }

    private func publish(_ metrics: AgentMetrics) {
        guard broker.isConnected else { return }
        do {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            let bytes = try encoder.encode(metrics)
            try bytes.withUnsafeBytes { raw in
                _ = try broker.publish(topic: topic, payload: raw, qos: 0, retain: false)
            }
        } catch {
            logger.debug("publishing metrics failed: \(error)")
        }
    }

}
