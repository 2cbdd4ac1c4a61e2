import ArgumentParser
import CBenchSupport
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Core Motion's batched sensor data (CMBatchedSensorManager) through the release `motion-agent`: a high-rate
/// accelerometer (800 Hz) and device motion (200 Hz), other streams off, published three ways — one JSON
/// message per sample, JSON batches and binary batches ("MAB" v1, docs/payloads.md) — against a local
/// mosquitto. Per stream: broker messages/s, samples/s delivered (decoded from the batches), bytes per message
/// and per sample (payload only, and as MQTT 5 PUBLISH packets), gaps in `seq` and in sample timestamps; per
/// configuration: the agent's and the broker's CPU % of one core.
struct BatchedStreams: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "batching",
        abstract: "Messages/s, samples/s, bytes per sample and CPU of 800 Hz / 200 Hz streams, unbatched vs batched."
    )

    @Option(help: "The motion-agent binary (release).") var agent = Settings().agent
    @Option(help: "Accelerometer rate, Hz (at most 1000).") var accelerometerRate = Settings().accelerometerRateHz
    @Option(help: "Device-motion rate, Hz (at most 1000).") var deviceMotionRate = Settings().deviceMotionRateHz
    @Option(help: "Accelerometer samples per batched message.") var accelerometerBatch = Settings().accelerometerBatch
    @Option(help: "Device-motion samples per batched message.") var deviceMotionBatch = Settings().deviceMotionBatch
    @Option(help: "Seconds measured per configuration.") var seconds = Settings().seconds
    @Option(help: "Seconds of settling after the first message of both streams.") var settle = Settings().settle
    @Option(help: "QoS of both streams and of the measuring subscription (0–2).") var qos = Settings().qos
    @Option(help: "Runs of the three configurations (interleaved); each figure is the median.") var runs = 1
    @Option(
        help: """
            Input: 'simulated' (source.simulated.rate_hz = the highest stream rate: the top of the simulator's \
            ladder, so the device runs at exactly that rate) or 'replay' (a 10 s simulated 9-axis walk recorded \
            at that rate, replayed in real time, looping).
            """
    )
    var input = Settings().input

    /// What one measurement runs; the defaults are the issue's example rates with 20 messages/s per stream.
    struct Settings: Sendable {
        var agent = ".build/release/motion-agent"
        var accelerometerRateHz = 800.0
        var deviceMotionRateHz = 200.0
        var accelerometerBatch = 40
        var deviceMotionBatch = 10
        var seconds = 15.0
        var settle = 3.0
        var qos = 0
        var runs = 1
        var input = "simulated"
    }

    func run() async throws {
        let settings = Settings(
            agent: agent,
            accelerometerRateHz: accelerometerRate,
            deviceMotionRateHz: deviceMotionRate,
            accelerometerBatch: accelerometerBatch,
            deviceMotionBatch: deviceMotionBatch,
            seconds: seconds,
            settle: settle,
            qos: qos,
            runs: runs,
            input: input
        )
        let rows = try await Self.measure(settings)
        BenchRow.printTable(
            "Batched streams (release motion-agent, \(input) input, QoS \(qos), \(Int(seconds)) s per configuration, "
                + "\(runs) run\(runs == 1 ? "" : "s"), medians)",
            rows
        )
    }

    /// One way of publishing the streams.
    struct Variant: Sendable {
        var label: String
        var encoding: String
        /// Samples per message, one per measured stream, in order.
        var batches: [Int]
    }

    /// A measured stream: its config key (and topic suffix), binary kind and rate.
    struct StreamSpec: Sendable {
        var name: String
        var kind: UInt8
        var rateHz: Double
    }

    /// What one stream delivered in one window.
    struct StreamFigures: Sendable {
        var messages = 0
        var samples = 0
        var payloadBytes = 0
        /// The same messages as MQTT PUBLISH packets on the wire (TCP/IP headers not counted).
        var packetBytes = 0
        /// Places where a sample's `seq` did not follow the previous one by exactly 1.
        var seqGaps = 0
        /// `seq` values skipped over all gaps.
        var missingSamples = 0
        /// Consecutive samples more than 1.5 periods apart, or not increasing.
        var timestampGaps = 0
        var undecodable = 0
        var firstError: String?
        /// Per message, receipt − the timestamp of its oldest sample, ms: the batching delay plus the path.
        /// Only with the simulated input, whose timestamps are CLOCK_MONOTONIC at acquisition.
        var oldestSampleAgesMs: [Double] = []
        /// JSON samples carrying `"clockSynchronized":false` (the agent adds it while adjtimex reports the clock
        /// unsynchronized, checked once a second), which makes them that flag's 26 bytes longer.
        var unsynchronizedSamples = 0
        /// Messages with another sample count than the configured batch (the agent sends partial batches only
        /// when it reconfigures or stops), and the first one: its first seq and sample count.
        var partialBatches = 0
        var firstPartial: String?
    }

    static let unsynchronizedFlag = Array(",\"clockSynchronized\":false".utf8)

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

    static func measure(_ settings: Settings) async throws -> [BenchRow] {
        guard FileManager.default.isExecutableFile(atPath: settings.agent) else {
            throw ValidationError(
                "no executable at \(settings.agent) — build it: swift build -c release --product motion-agent"
            )
        }
        guard settings.input == "simulated" || settings.input == "replay" else {
            throw ValidationError("--input must be simulated or replay")
        }
        guard (0...2).contains(settings.qos) else { throw ValidationError("--qos must be 0, 1 or 2") }
        // The agent's own limits (streams.<name>.batch and rate_hz in config.yaml).
        guard [settings.accelerometerBatch, settings.deviceMotionBatch].allSatisfy({ (1...1000).contains($0) }) else {
            throw ValidationError("batch sizes must be 1–1000 samples (streams.<name>.batch)")
        }
        guard [settings.accelerometerRateHz, settings.deviceMotionRateHz].allSatisfy({ $0 > 0 && $0 <= 1000 }) else {
            throw ValidationError("stream rates must be above 0 and at most 1000 Hz (streams.<name>.rate_hz)")
        }
        let streams = [
            StreamSpec(name: "accelerometer", kind: 1, rateHz: settings.accelerometerRateHz),
            StreamSpec(name: "device-motion", kind: 4, rateHz: settings.deviceMotionRateHz),
        ]
        let batches = [settings.accelerometerBatch, settings.deviceMotionBatch]
        let label = "N=" + batches.map(String.init).joined(separator: "/")
        let variants = [
            Variant(label: "json N=1", encoding: "json", batches: [1, 1]),
            Variant(label: "json \(label)", encoding: "json", batches: batches),
            Variant(label: "binary \(label)", encoding: "binary", batches: batches),
        ]
        var results = [[RunFigures]](repeating: [], count: variants.count)
        var repeated = [[Double]](repeating: [], count: variants.count)
        for run in 1...max(1, settings.runs) {
            for (index, variant) in variants.enumerated() {
                progress("batching run \(run)/\(max(1, settings.runs)): \(variant.label)")
                var figures = try await measureOnce(variant, streams: streams, settings: settings)
                // Something else on a shared machine may stop the agent mid-window (seen here: a graceful stop,
                // SIGTERM or SIGINT not sent by the bench, 2.8 s in). Such a run measures that, not batching:
                // repeat it, at most twice, and say so in the table. A crash is not repeated: it is reported.
                var retries = 0
                while let ended = figures.agentExitedAfter, figures.agentStoppedGracefully, retries < 2 {
                    retries += 1
                    repeated[index].append(ended)
                    progress("batching run \(run): \(variant.label) again, the agent ended before the window did")
                    figures = try await measureOnce(variant, streams: streams, settings: settings)
                }
                results[index].append(figures)
            }
        }
        var rows: [BenchRow] = []
        for (index, variant) in variants.enumerated() {
            rows += Self.rows(variant, results[index], repeated: repeated[index], streams: streams, qos: settings.qos)
        }
        return rows
    }

    /// Starts a broker, the capture subscriber and the agent for `variant`; measures one window.
    static func measureOnce(_ variant: Variant, streams: [StreamSpec], settings: Settings) async throws -> RunFigures {
        let broker = try BenchBroker()
        defer { broker.stop() }
        let device = "bench-batching"
        let topics = streams.map { "motion/\(device)/\($0.name)" }
        let expected = Set(topics + ["motion/\(device)/status", "motion/\(device)/metrics"])
        let capture = try await MessageCapture(
            broker: broker,
            clientID: "bench-batching-capture",
            // Everything, so that traffic from anything else that found this broker's port shows.
            filters: ["#"],
            qos: settings.qos
        )
        let inputRateHz = streams.map(\.rateHz).max() ?? 0
        let source: String
        if settings.input == "replay" {
            let file = broker.directory + "/walk.csv"
            try RealisticLoad.writeRecording(to: file, rateHz: inputRateHz, seconds: 10)
            source = """
                  kind: replay
                  replay:
                    file: \(file)
                    speed: realtime
                    loop: true
                """
        } else {
            source = """
                  kind: simulated
                  simulated:
                    scenario: walking
                    rate_hz: \(inputRateHz)
                """
        }
        func stream(_ spec: StreamSpec, batch: Int, extra: String = "") -> String {
            "{enabled: true, rate_hz: \(spec.rateHz), qos: \(settings.qos), retain: false, batch: \(batch), "
                + "encoding: \(variant.encoding)\(extra)}"
        }
        // Debug logging adds a handful of lines per run (none per sample or message) and names the signal that
        // stopped the agent ("Signal caught"), for the kept logs of runs another process cut short.
        // The 9-axis frame, as the load benchmark and the default config use.
        let motionFrame = ", reference_frame: xMagneticNorthZVertical"
        let configuration = """
            device:
              id: \(device)
            agent:
              state_dir: \(broker.directory)/state
              log_level: debug
            source:
            \(source)
            mqtt:
              host: 127.0.0.1
              port: \(broker.port)
            control:
              persist: false
            streams:
              accelerometer: \(stream(streams[0], batch: variant.batches[0]))
              gyroscope: {enabled: false}
              magnetometer: {enabled: false}
              device-motion: \(stream(streams[1], batch: variant.batches[1], extra: motionFrame))
              pedometer: {enabled: false}
              activity: {enabled: false}
              altimeter: {enabled: false}
              submersion: {enabled: false}
            """
        let configPath = broker.directory + "/config.yaml"
        try FileManager.default.createDirectory(atPath: broker.directory + "/state", withIntermediateDirectories: true)
        try configuration.write(toFile: configPath, atomically: true, encoding: .utf8)
        let logPath = broker.directory + "/agent.log"
        let process = try BenchProcess(settings.agent, ["run", "--config", configPath], output: logPath)
        defer { process.terminate() }

        let deadline = bench_monotonic_ns() + 30_000_000_000
        while topics.contains(where: { capture.firstReceipt(topic: $0) == nil }) {
            guard bench_monotonic_ns() < deadline, process.isRunning else {
                await capture.stop()
                let log = (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
                throw ValidationError("motion-agent did not publish both streams within 30 s; its log:\n\(log)")
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        try await Task.sleep(for: .seconds(settings.settle))
        let agentStart = RealisticLoad.cpuTicks(process.pid)
        let brokerStart = RealisticLoad.cpuTicks(broker.pid)
        let start = bench_monotonic_ns()
        let windowEnd = start + UInt64(settings.seconds * 1e9)
        // Watched, not slept through: on this shared machine something else may end the agent (its counts would
        // then just look low), and /proc of an ended process reads 0 ticks.
        var agentEnd = agentStart
        var agentExitedAfter: Double?
        while bench_monotonic_ns() < windowEnd {
            try await Task.sleep(for: .milliseconds(min(250, max(1, (windowEnd - bench_monotonic_ns()) / 1_000_000))))
            guard agentExitedAfter == nil else { continue }
            if process.isRunning {
                agentEnd = RealisticLoad.cpuTicks(process.pid)
            } else {
                let after = Double(bench_monotonic_ns() - start) / 1e9
                agentExitedAfter = after
                progress(String(format: "batching \(variant.label): motion-agent ended %.1f s into the window", after))
            }
        }
        let brokerEnd = RealisticLoad.cpuTicks(broker.pid)
        let end = bench_monotonic_ns()
        process.terminate()
        await capture.stop()
        let window = Double(end - start) / 1e9
        let ticksPerSecond = Double(sysconf(Int32(_SC_CLK_TCK)))
        let received = capture.messages(from: start, to: end)
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
        let log = (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
        let anomalous =
            figures.contains { $0.seqGaps + $0.timestampGaps + $0.undecodable + $0.partialBatches > 0 }
            || !logProblems(log).isEmpty || agentExitedAfter != nil
        if anomalous {
            // The broker's directory goes with it: keep the agent's log for the post-mortem.
            let kept = "/tmp/motion-bench-batching-\(getpid())-\(start).log"
            try? FileManager.default.copyItem(atPath: logPath, toPath: kept)
            progress("batching \(variant.label): something is off (see the table); the agent's log is kept in \(kept)")
        }
        return RunFigures(
            windowSeconds: window,
            streams: figures,
            agentCPU: 100 * Double(agentEnd - agentStart) / ticksPerSecond / window,
            brokerCPU: 100 * Double(brokerEnd - brokerStart) / ticksPerSecond / window,
            deviceRateHz: deviceRateHz(log),
            logProblems: logProblems(log),
            droppedBySubscriber: capture.droppedCount,
            otherTopics: capture.messages(from: 0, to: end).map(\.topic).filter { !expected.contains($0) },
            agentExitedAfter: agentExitedAfter,
            agentStoppedGracefully: agentExitedAfter != nil && log.contains("shutting down: draining the outbox")
        )
    }

    /// Counts, sizes and continuity of one stream's messages (in arrival order).
    static func tally(
        _ messages: [MessageCapture.Message],
        spec: StreamSpec,
        batch: Int,
        topicBytes: Int,
        qos: Int,
        monotonicTimestamps: Bool
    ) -> StreamFigures {
        var figures = StreamFigures()
        let period = 1 / spec.rateHz
        var previous: BatchPayload.Sample?
        for message in messages {
            figures.messages += 1
            figures.payloadBytes += message.payload.count
            figures.packetBytes += publishPacketBytes(
                topicBytes: topicBytes,
                payloadBytes: message.payload.count,
                qos: qos
            )
            let decoded: BatchPayload
            do {
                decoded = try BatchPayload(decoding: message.payload, kind: spec.kind)
            } catch {
                figures.undecodable += 1
                if figures.firstError == nil { figures.firstError = "\(error)" }
                previous = nil
                continue
            }
            figures.samples += decoded.samples.count
            if decoded.samples.count != batch {
                figures.partialBatches += 1
                if figures.firstPartial == nil {
                    let at = Double(message.receivedNanoseconds - (messages.first?.receivedNanoseconds ?? 0)) / 1e9
                    figures.firstPartial =
                        "\(decoded.samples.count) samples from seq \(decoded.samples.first?.seq ?? 0), "
                        + String(format: "%.1f s into the window", at)
                }
            }
            if decoded.encoding == .json {
                figures.unsynchronizedSamples += occurrences(of: unsynchronizedFlag, in: message.payload)
            }
            if monotonicTimestamps, let oldest = decoded.samples.first {
                figures.oldestSampleAgesMs.append(Double(message.receivedNanoseconds) / 1e6 - oldest.timestamp * 1e3)
            }
            for sample in decoded.samples {
                if let last = previous {
                    if sample.seq != last.seq + 1 {
                        figures.seqGaps += 1
                        if sample.seq > last.seq { figures.missingSamples += Int(sample.seq - last.seq - 1) }
                    }
                    let step = sample.timestamp - last.timestamp
                    if step <= 0 || step > 1.5 * period { figures.timestampGaps += 1 }
                }
                previous = sample
            }
        }
        return figures
    }

    static func occurrences(of pattern: [UInt8], in bytes: [UInt8]) -> Int {
        guard !pattern.isEmpty, bytes.count >= pattern.count else { return 0 }
        var count = 0
        var i = 0
        while i <= bytes.count - pattern.count {
            if bytes[i] == pattern[0] && bytes[i..<i + pattern.count].elementsEqual(pattern) {
                count += 1
                i += pattern.count
            } else {
                i += 1
            }
        }
        return count
    }

    /// Bytes of an MQTT 5 PUBLISH packet: fixed header (1 byte + the remaining length as a 1–4 byte varint),
    /// topic length (2) and topic, packet id (2, QoS > 0 only), property length (1: the agent sends none), payload.
    static func publishPacketBytes(topicBytes: Int, payloadBytes: Int, qos: Int) -> Int {
        let remaining = 2 + topicBytes + (qos > 0 ? 2 : 0) + 1 + payloadBytes
        var lengthBytes = 1
        var rest = remaining >> 7
        while rest > 0 {
            lengthBytes += 1
            rest >>= 7
        }
        return 1 + lengthBytes + remaining
    }

    /// Log lines at notice level or above, and plan changes after the start (each reconfigures the streams
    /// and so sends partial batches).
    static func logProblems(_ log: String) -> [String] {
        let lines = log.split(separator: "\n").map(String.init)
        var problems = lines.filter { line in
            ["notice", "warning", "error", "critical"].contains(line.split(separator: " ").dropFirst().first ?? "")
        }
        let plans = lines.filter { $0.contains("sensor device on at ") }.count
        if plans > 1 { problems.append("\(plans - 1) plan changes after the start (\"sensor device on at\" lines)") }
        return problems
    }

    /// The device rate from the agent's last "sensor device on at … Hz" log line.
    static func deviceRateHz(_ log: String) -> Double? {
        guard let line = log.split(separator: "\n").last(where: { $0.contains("sensor device on at ") }),
            let on = line.range(of: "on at "),
            let hz = line[on.upperBound...].range(of: " Hz")
        else { return nil }
        return Double(line[on.upperBound..<hz.lowerBound])
    }

    /// - Parameter repeated: when the agent ended early in runs that were then repeated, seconds into the window.
    static func rows(
        _ variant: Variant,
        _ runs: [RunFigures],
        repeated: [Double],
        streams: [StreamSpec],
        qos: Int
    ) -> [BenchRow] {
        let name = "batching[\(variant.label)]"
        func median(_ value: (RunFigures) -> Double) -> Double { Statistics.median(runs.map(value)) }
        func spread(_ value: (RunFigures) -> Double) -> String {
            let values = runs.map(value)
            guard values.count > 1, let low = values.min(), let high = values.max() else { return "" }
            return String(format: " (%.2f–%.2f)", low, high)
        }
        let inputRateHz = streams.map(\.rateHz).max() ?? 0
        let deviceRates = runs.map(\.deviceRateHz)
        let plans = Set(deviceRates.map { $0.map { Self.format($0) + " Hz" } ?? "not logged" }).sorted()
        let dropped = runs.map(\.droppedBySubscriber).reduce(0, +)
        let problems = runs.flatMap(\.logProblems)
        let others = runs.flatMap(\.otherTopics)
        let exits = runs.compactMap(\.agentExitedAfter)
        var rows = [
            BenchRow(
                name: "\(name) device rate (agent log)",
                value: plans.joined(separator: ", "),
                target: "≥ \(Self.format(inputRateHz)) Hz",
                met: deviceRates.allSatisfy { ($0 ?? 0) >= inputRateHz }
            ),
            BenchRow(
                name: "\(name) agent log, notice or worse",
                value: problems.isEmpty ? "none" : "\(problems.count) lines, first: \(problems[0].suffix(90))",
                target: "none",
                met: problems.isEmpty
            ),
            BenchRow(
                name: "\(name) agent ran through the window",
                value: (exits.isEmpty
                    ? "yes"
                    : "no, in \(exits.count) run(s): ended "
                        + exits.map { String(format: "%.1f s", $0) }.joined(separator: ", ") + " in")
                    + (repeated.isEmpty
                        ? ""
                        : "; \(repeated.count) run(s) repeated: another process stopped the agent "
                            + repeated.map { String(format: "%.1f s", $0) }.joined(separator: ", ") + " in"),
                target: "yes",
                met: exits.isEmpty
            ),
            BenchRow(
                name: "\(name) other messages on the broker",
                value: others.isEmpty ? "none" : "\(others.count), first on \(others[0])",
                target: "none",
                met: others.isEmpty
            ),
            BenchRow(
                name: "\(name) agent CPU",
                value: String(format: "%.2f %% of one core", median(\.agentCPU)) + spread(\.agentCPU)
            ),
            BenchRow(
                name: "\(name) broker CPU",
                value: String(format: "%.2f %% of one core", median(\.brokerCPU)) + spread(\.brokerCPU)
            ),
            BenchRow(
                name: "\(name) messages/s, both streams",
                value: String(
                    format: "%.1f",
                    median { run in Double(run.streams.map(\.messages).reduce(0, +)) / run.windowSeconds }
                )
            ),
        ]
        for (index, spec) in streams.enumerated() {
            let stream = "\(name) \(spec.name)"
            func perWindow(_ value: (StreamFigures) -> Int) -> Double {
                median { Double(value($0.streams[index])) / $0.windowSeconds }
            }
            func ratio(_ numerator: (StreamFigures) -> Int, _ denominator: (StreamFigures) -> Int) -> Double {
                median { run in
                    let d = denominator(run.streams[index])
                    return d == 0 ? .nan : Double(numerator(run.streams[index])) / Double(d)
                }
            }
            let samplesPerSecond = perWindow(\.samples)
            func total(_ value: (StreamFigures) -> Int) -> Int { runs.map { value($0.streams[index]) }.reduce(0, +) }
            let seqGaps = total(\.seqGaps)
            let timestampGaps = total(\.timestampGaps)
            let undecodable = total(\.undecodable)
            var gaps = "\(seqGaps) / \(timestampGaps)"
            if total(\.missingSamples) > 0 { gaps += ", \(total(\.missingSamples)) samples missing" }
            if undecodable > 0 {
                let first = runs.compactMap { $0.streams[index].firstError }.first ?? ""
                gaps += ", \(undecodable) undecodable: \(first)"
            }
            if dropped > 0 { gaps += ", \(dropped) dropped by the subscriber" }
            let partial = total(\.partialBatches)
            if partial > 0 {
                let first = runs.compactMap { $0.streams[index].firstPartial }.first ?? ""
                gaps += ", \(partial) messages not of \(variant.batches[index]) samples (first: \(first))"
            }
            rows += [
                BenchRow(
                    name: "\(stream) messages/s",
                    value: String(
                        format: "%.1f (%.1f samples/msg)",
                        perWindow(\.messages),
                        ratio(\.samples, \.messages)
                    )
                ),
                BenchRow(
                    name: "\(stream) samples/s delivered",
                    value: String(format: "%.1f", samplesPerSecond),
                    target: "\(Self.format(spec.rateHz)) ± 1 %",
                    met: abs(samplesPerSecond - spec.rateHz) <= 0.01 * spec.rateHz
                ),
                BenchRow(
                    name: "\(stream) payload bytes/message",
                    value: String(format: "%.1f", ratio(\.payloadBytes, \.messages))
                ),
                BenchRow(
                    name: "\(stream) bytes/sample payload / PUBLISH",
                    value: String(
                        format: "%.1f / %.1f",
                        ratio(\.payloadBytes, \.samples),
                        ratio(\.packetBytes, \.samples)
                    ),
                    target: "PUBLISH: MQTT 5 header + topic\(qos > 0 ? " + packet id" : ""), no TCP/IP"
                ),
            ]
            if variant.encoding == "json" {
                let flag = unsynchronizedFlag.count
                rows.append(
                    BenchRow(
                        name: "\(stream) samples with clockSynchronized:false",
                        value: String(format: "%.0f %%", 100 * ratio(\.unsynchronizedSamples, \.samples)),
                        target: String(
                            format: "%d B each; without: %.1f B/sample",
                            flag,
                            ratio({ $0.payloadBytes - flag * $0.unsynchronizedSamples }, \.samples)
                        )
                    )
                )
            }
            let ages = runs.map { $0.streams[index].oldestSampleAgesMs.sorted() }
            if ages.allSatisfy({ !$0.isEmpty }) {
                rows.append(
                    BenchRow(
                        name: "\(stream) oldest sample's age at receipt p50 / max",
                        value: String(
                            format: "%.1f / %.1f ms",
                            Statistics.median(ages.map { Statistics.percentile($0, 50) }),
                            ages.compactMap(\.last).max() ?? .nan
                        ),
                        target: String(
                            format: "batch wait (N−1)/rate: %.1f ms",
                            Double(variant.batches[index] - 1) / spec.rateHz * 1e3
                        )
                    )
                )
            }
            rows += [
                BenchRow(
                    name: "\(stream) gaps seq / timestamp",
                    value: gaps,
                    target: "0 / 0",
                    met: seqGaps == 0 && timestampGaps == 0 && undecodable == 0 && dropped == 0 && partial == 0
                )
            ]
        }
        return rows
    }

    private static func format(_ hz: Double) -> String {
        hz == hz.rounded() ? String(Int(hz)) : String(hz)
    }
}
