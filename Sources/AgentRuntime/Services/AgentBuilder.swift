import AgentConfig
import AgentControl
import AgentPipeline
import AgentPorts
import Foundation
import Integrations
import Logging
import MotionEstimation
import MotionWire
import ServiceLifecycle
import SparkplugB

/// Wires the agent — source → hub → streams → outbox → publisher → broker, the controller, the control door,
/// the history and the operator's reports — and returns its services in the order of one `ServiceGroup`.
package struct AgentBuilder {
    package struct Options: Sendable {
        /// Seconds the shutdown may spend handing queued messages to the broker.
        package var drainTimeout: Double = 3
        /// The in-memory outbox: about 20 s of every stream at 1 kHz input while the broker is away.
        package var outboxBytes: Int = 2 << 20
        /// Who turns the outbox publisher's loops: its own threads (the agent), or whoever runs the agent
        /// (the simulation, which runs a whole fleet on one thread).
        package var publisherDrive: OutboxPublisher.Drive = .threads
        /// Whether SIGHUP reloads config.yaml. The simulation runs many agents in one process, without signals.
        package var reloadsOnHangup = true
        /// Seeds the agent's random choices (reconnect jitter, the first of several servers); nil: a new seed
        /// each start, so a fleet that restarts together spreads its retries. The simulation passes one, so that
        /// a schedule replays bit for bit.
        package var randomSeed: UInt64?
        /// Where the services' own unstructured tasks (timers, the connections' event readers) run; nil: the
        /// global pool. The simulation passes its executor, so that a message delivered from outside a
        /// simulation step still resumes the agent's task on the simulation's thread, in order.
        package var taskExecutor: (any TaskExecutor)?
        package init() {}
    }

    package var configuration: AgentConfiguration
    package var source: SensorSource
    package var broker: BrokerClient
    /// The Sparkplug edge node's own connection (`sparkplug.enabled`): a second client, since its will is the
    /// NDEATH and the native connection's is the offline status. nil: Sparkplug is not started.
    package var sparkplugBroker: BrokerClient?
    /// The Sparkplug account's password (`sparkplug.password_file`); nil: `password`.
    package var sparkplugPassword: String?
    /// Where the agent keeps what survives a restart (Platform's `StateFiles` on the device).
    package var state: any StateDirectory
    package var password: String?
    /// The file `reload-config` and SIGHUP re-read; nil when the agent is built without one.
    package var configurationPath: String?
    /// The operators' public keys (`control.trusted_keys_file`); nil: commands and documents are not signed.
    package var trustedKeys: OperatorKeys?
    package var host: HostSystem
    /// The one time source of everything the builder wires: `SystemClock` on a device, a virtual clock in the
    /// simulation.
    package var clock: any AgentClock
    package var logger: Logger
    package var options: Options

    package init(
        configuration: AgentConfiguration,
        source: SensorSource,
        broker: BrokerClient,
        sparkplugBroker: BrokerClient? = nil,
        sparkplugPassword: String? = nil,
        state: any StateDirectory,
        password: String?,
        configurationPath: String? = nil,
        trustedKeys: OperatorKeys? = nil,
        host: HostSystem,
        clock: any AgentClock = SystemClock(),
        logger: Logger,
        options: Options = Options()
    ) {
        self.clock = clock
        self.configuration = configuration
        self.source = source
        self.broker = broker
        self.sparkplugBroker = sparkplugBroker
        self.sparkplugPassword = sparkplugPassword
        self.state = state
        self.password = password
        self.configurationPath = configurationPath
        self.trustedKeys = trustedKeys
        self.host = host
        self.logger = logger
        self.options = options
    }

    /// The composition root, as a table of parts — each made from the ones before it, each maker's parameters
    /// saying what it needs (AgentBuilder+Parts.swift): the configuration's layers, the data path (source → hub →
    /// streams → outbox → publisher, the durable log), what reports on it (status, health, history, counters),
    /// the control door, and the services in their shutdown order.
    package func build() -> AgentServices {
        let layers = makeLayers()
        let data = makeDataPath(layers)
        let reports = makeReports(layers, data)
        let door = makeControlDoor(layers, data, reports)
        let sparkplug = makeSparkplug(layers, data, reports, door)
        return AgentServices(
            services: makeServices(layers, data, reports, door, sparkplug: sparkplug),
            parts: AgentServices.Parts(
                publisher: data.publisher,
                controller: data.controller,
                reconciler: layers.reconciler,
                outbox: data.outbox,
                hub: data.hub,
                sparkplug: sparkplug
            )
        )
    }

    /// The QoS of the agent's own subscriptions (commands and desired documents). In a clean session QoS 1 gains
    /// nothing on the way in: what the broker sends during a connection comes over TCP, what was sent while the
    /// agent was away is gone either way, and the desired documents are retained, handed over again at every
    /// subscription. It costs on clusters: NATS makes each QoS 1 subscription a replicated JetStream consumer, one
    /// Raft group per topic filter, four or more per agent (BENCHMARKS.md, "Cluster at N = 300, again"). A
    /// persistent session (`clean_session: false`) keeps QoS 1: the broker queues commands sent while away.
    static func subscriptionQoS(_ mqtt: MQTTSettings) -> Int { mqtt.cleanSession ? 0 : 1 }

    /// The options of every connection of this start: the broker and credentials of config.yaml, the will —
    /// the offline status with this start's boot count — and the largest packet the agent takes.
    static func connectOptions(
        _ configuration: AgentConfiguration,
        password: String?,
        will topic: String,
        maximumPacketSize: Int,
        composer: StatusComposer
    ) -> @Sendable (UInt64) throws -> BrokerConnectOptions {
        { bootCount in
            let mqtt = configuration.mqtt
            let willBytes = try StatusJSON.encode(composer.will(bootCount: bootCount))
            return BrokerConnectOptions(
                host: mqtt.host,
                port: mqtt.port,
                clientID: configuration.resolvedClientID,
                protocolVersion: mqtt.protocolVersion == .v311 ? .v311 : .v5,
                keepaliveSeconds: mqtt.keepalive,
                cleanSession: mqtt.cleanSession,
                username: mqtt.username,
                password: password,
                tls: mqtt.tls.map { BrokerTLS(caFile: $0.caFile, certFile: $0.certFile, keyFile: $0.keyFile) },
                will: BrokerWill(topic: topic, payload: willBytes, qos: 1, retain: true),
                maxInflightMessages: mqtt.maxInflight,
                sessionExpirySeconds: UInt32(clamping: mqtt.sessionExpirySeconds),
                maximumPacketSize: maximumPacketSize
            )
        }
    }

    /// The native connection's options with the Sparkplug account, when it has one of its own.
    static func sparkplugOptions(
        _ native: BrokerConnectOptions,
        _ sparkplug: SparkplugSettings,
        password: String?
    ) -> BrokerConnectOptions {
        var options = native
        if let username = sparkplug.username { options.username = username }
        if let password { options.password = password }
        return options
    }

    /// Sparkplug's lane when `sparkplug.enabled` and a connection for it was given; nil (after saying why) when
    /// its catalog cannot be built.
    func openSparkplugLane(_ configuration: AgentConfiguration) -> SparkplugLane? {
        guard configuration.sparkplug.enabled else { return nil }
        guard sparkplugBroker != nil else {
            logger.error("sparkplug.enabled is true but this agent was built without a Sparkplug connection")
            return nil
        }
        do {
            return SparkplugLane(catalog: try MotionSparkplug.catalog(streams: configuration.sparkplug.streams))
        } catch {
            logger.error("Sparkplug is not started: \(error)")
            return nil
        }
    }
}
