import AgentConfig
import AgentPorts
import CBenchSupport
import Foundation
import Harness

extension BatchedStreams {
    /// One configuration's run.
    struct RunFigures: Sendable {
        var windowSeconds: Double
        var streams: [StreamFigures]
        var agentCPU: Double
        var brokerCPU: Double
        /// From the agent's log; nil when it logged no plan.
        var deviceRateHz: Double?
        /// The agent's log lines at notice level or above during the whole run.
        var logProblems: [String]
        var droppedBySubscriber: Int
        /// Messages on the broker from the agent's start to the end of the window that are neither the
        /// measured streams nor the agent's status and metrics (another process on this port, commands).
        var otherTopics: [String]
        /// Seconds into the window at which the agent was found ended, when it did not last the window.
        var agentExitedAfter: Double?
        /// Whether its log shows a graceful stop (it was sent SIGTERM or SIGINT) rather than a crash.
        var agentStoppedGracefully: Bool
    }

    /// Starts a broker, the capture subscriber and the agent for `variant`; measures one window.
    static func measureOnce(_ variant: Variant, streams: [StreamSpec], settings: Settings) async throws -> RunFigures {
        try await MosquittoBroker.withStarted(options: .benchmark()) { broker in
            let capture = try await CapturingSubscriber(
                broker: broker,
                // Everything, so that traffic from anything else that found this broker's port shows.
                filters: ["#"],
                qos: settings.qos,
                // Room for a whole run's backlog should the collector stall: a dropped message would read as a gap.
                eventBacklogLimit: 1 << 20
            )
            // On an error, the subscriber disconnects as it goes.
            let figures = try await measureOnce(variant, streams: streams, settings: settings, broker, capture)
            await capture.close()
            return figures
        }
    }

    private static func measureOnce(
        _ variant: Variant,
        streams: [StreamSpec],
        settings: Settings,
        _ broker: MosquittoBroker,
        _ capture: CapturingSubscriber
    ) async throws -> RunFigures {
        let device = "bench-batching"
        let scheme = TopicScheme(template: TopicSettings().root, device: device)
        let topics = streams.map { scheme.topic(path: $0.name) }
        let expected = Set(topics + [scheme.status, scheme.metrics])
        func stream(_ spec: StreamSpec, batch: Int, extra: String = "") -> String {
            "{enabled: true, rate_hz: \(spec.rateHz), qos: \(settings.qos), retain: false, batch: \(batch), "
                + "encoding: \(variant.encoding)\(extra)}"
        }
        // The 9-axis frame, as the load benchmark and the default config use.
        let motionFrame = ", reference_frame: xMagneticNorthZVertical"
        let configuration = BenchAgentConfiguration(
            device: device,
            directory: broker.directory,
            port: broker.port,
            // Debug logging adds a handful of lines per run (none per sample or message) and names the signal
            // that stopped the agent ("Signal caught"), for the kept logs of runs another process cut short.
            logLevel: "debug",
            input: try BenchAgentConfiguration.input(
                settings.input,
                rateHz: streams.map(\.rateHz).max() ?? 0,
                directory: broker.directory
            ),
            streams: [
                .accelerometer: stream(streams[0], batch: variant.batches[0]),
                .deviceMotion: stream(streams[1], batch: variant.batches[1], extra: motionFrame),
            ]
        )
        let process = try AgentProcess(agent: settings.agent, configPath: try configuration.write())
        return try await process.stopping {
            try await process.waitUntil(timeout: 30, "publish both streams") {
                !topics.contains { capture.firstReceipt(topic: $0) == nil }
            }
            try await Task.sleep(for: .seconds(settings.settle))
            let brokerPID = broker.processIdentifier ?? 0
            let agentStart = ProcessStatistics.cpuTicks(process.pid)
            let brokerStart = ProcessStatistics.cpuTicks(brokerPID)
            let start = bench_monotonic_ns()
            let windowEnd = start + UInt64(settings.seconds * 1e9)
            // Watched, not slept through: on this shared machine something else may end the agent (its counts would
            // then just look low), and /proc of an ended process reads 0 ticks.
            var agentEnd = agentStart
            var agentExitedAfter: Double?
            while bench_monotonic_ns() < windowEnd {
                try await Task.sleep(
                    for: .milliseconds(min(250, max(1, (windowEnd - bench_monotonic_ns()) / 1_000_000)))
                )
                guard agentExitedAfter == nil else { continue }
                if process.isRunning {
                    agentEnd = ProcessStatistics.cpuTicks(process.pid)
                } else {
                    let after = Double(bench_monotonic_ns() - start) / 1e9
                    agentExitedAfter = after
                    progress(
                        String(format: "batching \(variant.label): motion-agent ended %.1f s into the window", after)
                    )
                }
            }
            let brokerEnd = ProcessStatistics.cpuTicks(brokerPID)
            let end = bench_monotonic_ns()
            await process.stop()
            let window = Double(end - start) / 1e9
            let received = capture.arrivals(from: start, to: end)
            let figures = zip(streams.indices, topics).map { index, topic in
                tally(
                    received.filter { $0.topic == topic },
                    spec: streams[index],
                    batch: variant.batches[index],
                    topicBytes: topic.utf8.count,
                    qos: settings.qos,
                    monotonicTimestamps: settings.input == "simulated"
                )
            }
            let log = process.log
            let anomalous =
                figures.contains { $0.seqGaps + $0.timestampGaps + $0.undecodable + $0.partialBatches > 0 }
                || !AgentLog.problems(log).isEmpty || agentExitedAfter != nil
            if anomalous {
                let kept = process.keepLog(name: "batching")
                progress(
                    "batching \(variant.label): something is off (see the table); the agent's log is kept in \(kept)"
                )
            }
            return RunFigures(
                windowSeconds: window,
                streams: figures,
                agentCPU: ProcessStatistics.cpuPercent(from: agentStart, to: agentEnd, over: window),
                brokerCPU: ProcessStatistics.cpuPercent(from: brokerStart, to: brokerEnd, over: window),
                deviceRateHz: AgentLog.deviceRateHz(log),
                logProblems: AgentLog.problems(log),
                droppedBySubscriber: capture.droppedCount,
                otherTopics: capture.arrivals(from: 0, to: end).map(\.topic).filter { !expected.contains($0) },
                agentExitedAfter: agentExitedAfter,
                agentStoppedGracefully: agentExitedAfter != nil && log.contains("shutting down: draining the outbox")
            )
        }
    }
}
