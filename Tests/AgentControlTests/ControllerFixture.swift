import AgentConfig
import AgentControl
import AgentPipeline
import AgentPorts
import Foundation
import Logging
import MotionWire
import Platform
import Recording

/// What the control tests drive: a started controller over `source` running `configuration` (a reconciler's
/// effective configuration, or the defaults), with every stream from the real catalog, on device `dev1`'s
/// topics.
func startedController(
    source: any SensorSource,
    configuration: @escaping @Sendable () -> AgentConfiguration = { AgentConfiguration() },
    hub: SensorHub = SensorHub(outbox: Outbox()),
    referenceAttitudeStore: ReferenceAttitudeStore? = nil,
    logger: Logger = Logger(label: "test")
) throws -> AgentController {
    let topics = TopicScheme(root: "motion/dev1")
    let catalog = StreamCatalog(
        configuration: AgentConfiguration(),
        topics: topics,
        topicTable: TopicTable(),
        declinationDegrees: nil
    )
    let controller = AgentController(
        configuration: configuration,
        source: source,
        hub: hub,
        topics: topics,
        topicTable: TopicTable(),
        streamFactory: { [catalog] in catalog.make($0, $1) },
        referenceAttitudeStore: referenceAttitudeStore,
        logger: logger
    )
    try controller.start()
    return controller
}

/// A replay of ten samples of a device lying still, from a fresh file named after `prefix`.
func stillReplaySource(_ prefix: String) throws -> ReplaySensorSource {
    var text = RecordingFormat.header + "\n"
    for i in 0..<10 { text += "\(Double(i) / 100),0,0,-1,0,0,0.1,20,0,-40,,\n" }
    let path = NSTemporaryDirectory() + "\(prefix)-\(UUID().uuidString).csv"
    try text.write(toFile: path, atomically: true, encoding: .utf8)
    return try ReplaySensorSource(path: path, realtime: false, loop: false)
}

/// The configuration layers a test's control plane runs commands through: config.yaml's defaults, kept in
/// `stateDirectory` (as the agent keeps them) when one is given.
func testReconciler(stateDirectory: String? = nil) -> ConfigurationReconciler {
    var logger = Logger(label: "test")
    logger.logLevel = .critical
    return ConfigurationReconciler(
        base: AgentConfiguration(),
        store: stateDirectory.map { DesiredStateStore(state: StateFiles(path: $0)) },
        now: 1_763_700_000,
        logger: logger
    )
}
