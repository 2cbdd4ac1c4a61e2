import ArgumentParser

struct MotionAgentCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "motion-agent",
        abstract: "Streams Core Motion-style motion data from a Linux IMU over MQTT.",
        discussion: "Without a subcommand, `run` is assumed.",
        version: AgentVersionInfo.version,
        subcommands: [
            RunCommand.self, CheckConfigCommand.self, ListSensorsCommand.self, ProcessCommand.self,
            ControlCommandLine.self, FleetCommand.self, KeysCommand.self,
            SubscribeCommand.self, RecordCommand.self, WatchCommand.self, ConsoleCommand.self,
        ],
        defaultSubcommand: RunCommand.self
    )
}
