import ArgumentParser

@main
struct MotionAgentCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "motion-agent",
        abstract: "Streams Core Motion-style motion data from a Linux IMU over MQTT."
    )
}
