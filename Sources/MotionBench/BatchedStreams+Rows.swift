import Foundation

extension BatchedStreams {
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
        Int(exactly: hz).map(String.init) ?? String(hz)
    }
}
