import ArgumentParser

/// The benchmark and accuracy program. Each measurement is a subcommand in its own file; `all` runs the
/// set recorded in BENCHMARKS.md.
@main
struct MotionBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "motion-bench",
        abstract: "Measures MotionAgent's estimators, pipeline and publishing; prints tables.",
        subcommands: [
            BroadAccuracy.self,
            StepAccuracy.self,
            GaitGrid.self,
            ActivityAccuracy.self,
            FallAccuracy.self,
            EstimationSpeed.self,
            PipelineThroughput.self,
            PublishThroughput.self,
            FleetConvergence.self,
            ReconnectStampede.self,
            EndToEndLatency.self,
            RealisticLoad.self,
            BatchedStreams.self,
            ControlDoorCost.self,
            SparkplugEncodingCost.self,
            SimulationExplorer.self,
            AllBenchmarks.self,
        ]
    )
}
