import ArgumentParser

/// The whole performance set in one run, one table: estimation, pipeline, publishing, latency, load, batching.
struct AllBenchmarks: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "all",
        abstract: "Runs estimation, pipeline, publish, latency, load and batching; prints one table."
    )

    @Option(help: "The motion-agent binary (release) for the load run.") var agent = ".build/release/motion-agent"
    @Option(help: "Seconds of the load run per input.") var loadSeconds = 60.0
    @Option(help: "Load inputs: replay, simulated, iio (root: the fake IIO tree), both (replay, simulated) or all.")
    var loadInput = "all"
    @Option(help: "Seconds of the batching run per configuration.") var batchingSeconds = 15.0
    @Flag(help: "Skip the load and batching runs (no release motion-agent at hand).") var skipLoad = false

    func run() async throws {
        let loadInputs = RealisticLoad.inputs(loadInput)
        guard loadInputs.allSatisfy({ ["replay", "simulated", "iio"].contains($0) }) else {
            throw ValidationError("--load-input must be replay, simulated, iio, both or all")
        }
        var rows = EstimationSpeed.measure(samples: 60_000, repetitions: 7)
        rows += try PipelineThroughput.measure(samples: 200_000, repetitions: 5, rateHz: 100)
        rows += try await PublishThroughput.measure(counts: [100_000, 40_000], runs: 5, window: 100, payloadBytes: 200)
        rows += try await EndToEndLatency.measure(rates: [200, 1000], seconds: 10)
        if !skipLoad {
            for input in loadInputs {
                rows += try await RealisticLoad.measure(agent: agent, input: input, seconds: loadSeconds)
            }
            rows += try await BatchedStreams.measure(
                BatchedStreams.Settings(agent: agent, seconds: batchingSeconds)
            )
        }
        BenchRow.printTable("motion-bench all", rows)
    }
}
