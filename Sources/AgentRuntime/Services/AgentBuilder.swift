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
public struct AgentBuilder {
    public struct Options: Sendable {
        /// Seconds the shutdown may spend handing queued messages to the broker.
        public var drainTimeout: Double = 3
        /// The in-memory outbox: about 20 s of every stream at 1 kHz input while the broker is away.
        public var outboxBytes: Int = 2 << 20
        /// Who turns the outbox publisher's loops: its own threads (the agent), or whoever runs the agent
        /// (the simulation, which runs a whole fleet on one thread).
        public var publisherDrive: OutboxPublisher.Drive = .threads
        /// Whether SIGHUP reloads config.yaml. The simulation runs many agents in one process, without signals.
        public var reloadsOnHangup = true
        /// Seeds the agent's random choices (reconnect jitter, the first of several servers); nil: a new seed
        /// each start, so a fleet that restarts together spreads its retries. The simulation passes one, so that
        /// a schedule replays bit for bit.
        public var randomSeed: UInt64?
        /// Where the services' own unstructured tasks (timers, the connections' event readers) run; nil: the
        /// global pool. The simulation passes its executor, so that a message delivered from outside a
        /// simulation step still resumes the agent's task on the simulation's thread, in order.
        public var taskExecutor: (any TaskExecutor)?
        public init() {}
    }

    public var configuration: AgentConfiguration
    public var source: SensorSource
    public var broker: BrokerClient
    /// The Sparkplug edge node's own connection (`sparkplug.enabled`): a second client, since its will is the
    /// NDEATH and the native connection's is the offline status. nil: Sparkplug is not started.
    public var sparkplugBroker: BrokerClient?
    /// The Sparkplug account's password (`sparkplug.password_file`); nil: `password`.
    public var sparkplugPassword: String?
    /// Where the agent keeps what survives a restart (Platform's `StateFiles` on the device).
    public var state: any StateDirectory
    public var password: String?
    /// The file `reload-config` and SIGHUP re-read; nil when the agent is built without one.
    public var configurationPath: String?
    /// The operators' public keys (`control.trusted_keys_file`); nil: commands and documents are not signed.
    public var trustedKeys: OperatorKeys?
    public var host: HostSystem
    /// The one time source of everything the builder wires: `SystemClock` on a device, a virtual clock in the
    /// simulation.
    public var clock: any AgentClock
    public var logger: Logger
    public var options: Options

    public init(
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

    public func build() -> AgentServices {
        // config.yaml under the desired layers and command overrides the state directory kept: what this run
        // starts with, whether or not the broker is reachable.
        let root = TopicScheme(root: configuration.resolvedTopicRoot)
        var desiredTopics: [String: ConfigurationLayer] = [
            root.desired: .device, configuration.control.fleetDesiredTopic: .fleet,
        ]
        for group in configuration.control.groups { desiredTopics[TopicScheme.groupDesired(group)] = .group(group) }
        let reconciler = ConfigurationReconciler(
            base: configuration,
            store: configuration.control.persist ? DesiredStateStore(state: state) : nil,
            opener: DesiredDocumentOpener(keys: trustedKeys),
            topics: Dictionary(uniqueKeysWithValues: desiredTopics.map { ($0.value, $0.key) }),
            now: clock.realtimeSeconds(),
            logger: logger
        )
        let configuration = reconciler.effective
        let (host, broker, logger, clock) = (self.host, self.broker, self.logger, self.clock)
        let seed = options.randomSeed ?? UInt64.random(in: .min ... .max)
        // The durable log opens when the configuration in force first makes a stream durable — at start (config.yaml
        // or a kept desired document) or later (a desired document, a command, a reload) — not when config.yaml
        // alone says so: the agent reported such streams durable and lost them (issue 40). The staging ring is
        // reserved, not touched, until then.
        let staging = Outbox(capacityBytes: options.outboxBytes)
        let durableOutboxBox = DurableOutboxBox()
        let deviceFaults = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        var pipelineOptions = Pipeline.Options()
        pipelineOptions.outboxBytes = options.outboxBytes
        let sparkplugLane = openSparkplugLane(configuration)
        pipelineOptions.sparkplug = sparkplugLane
        pipelineOptions.durableStaging = staging
        pipelineOptions.durableRoutedAtStart = false
        pipelineOptions.prepare = { durableOutboxBox.outbox?.prepare(for: $0) }
        pipelineOptions.clock = clock
        pipelineOptions.clockSynchronized = { host.isClockSynchronized() }
        pipelineOptions.referenceAttitudeStore =
            configuration.control.persist
            ? ReferenceAttitudeStore(state: state, logger: logger) : nil
        pipelineOptions.pendingFallStore = PendingFallStore(state: state, logger: logger)
        // The acquisition thread only records and yields; the control service republishes the status.
        pipelineOptions.faults = { fault in
            deviceFaults.continuation.yield()
            if fault.recovered {
                logger.notice("sensor device recovered", metadata: ["iio.device": "\(fault.deviceID)"])
            } else {
                logger.error("sensor device fault: \(fault.message)", metadata: ["iio.device": "\(fault.deviceID)"])
            }
        }
        let pipeline = Pipeline(
            configuration: { [reconciler] in reconciler.effective },
            source: source,
            options: pipelineOptions,
            logger: logger
        )
        let (topics, controller, outbox, hub) = (pipeline.topics, pipeline.controller, pipeline.outbox, pipeline.hub)
        let publisher = OutboxPublisher(
            outbox: outbox,
            topics: pipeline.topicTable,
            broker: broker,
            window: configuration.mqtt.maxInflight,
            clock: clock,
            drive: options.publisherDrive,
            logger: logger
        )
        let durableOutbox = DurableOutbox(
            state: state,
            settings: DurableOutbox.Settings(configuration.outbox),
            staging: staging,
            memory: outbox,
            clock: clock,
            logger: logger
        )
        durableOutbox.attach(publisher)
        durableOutboxBox.outbox = durableOutbox
        let startup = AgentStartup()
        let bootCount = SharedCounter()
        let operations = AgentOperations(
            configuration: configuration,
            topics: topics,
            broker: broker,
            state: state,
            host: host,
            clock: clock,
            logger: logger
        )
        let connections = operations.connections
        let history = HistoryRecorder.open(
            state: state,
            retentionDays: configuration.pedometer.historyRetentionDays,
            controller: controller,
            clock: clock,
            logger: logger
        )
        let composer = StatusComposer(
            controller: controller,
            outbox: outbox,
            publisher: publisher,
            reconciler: reconciler,
            durableOutbox: durableOutbox,
            connections: connections,
            bootCount: bootCount
        )
        let status = StatusPublisher(composer: composer, broker: broker, topics: topics, logger: logger)
        let health = HealthReporter(
            host: host,
            connections: connections,
            publisher: publisher,
            firstServer: configuration.mqtt.endpoints[0].description,
            clock: clock,
            logger: logger
        )
        var controlSettings = ControlPlane.Settings()
        controlSettings.maxAgeSeconds = Double(configuration.control.maxAgeSeconds)
        controlSettings.ratePerSecond = configuration.control.rateLimitPerSecond
        controlSettings.burst = Double(configuration.control.rateLimitBurst)
        controlSettings.maxPayloadBytes = configuration.control.maxPayloadBytes
        controlSettings.keys = trustedKeys
        controlSettings.counterStore = configuration.control.persist ? state : nil
        let control = ControlPlane(
            controller: controller,
            history: history,
            reconciler: reconciler,
            desiredTopics: desiredTopics,
            topics: topics,
            deviceID: configuration.device.id,
            settings: controlSettings,
            clock: { clock.realtimeSeconds() },
            clockSynchronized: { host.isClockSynchronized() },
            statusDocument: { composer.status(.online, reason: nil) },
            reloadConfiguration: { [configurationPath] in
                try ConfigurationReload.apply(path: configurationPath, reconciler: reconciler, controller: controller)
            },
            logger: logger
        )
        // Desired documents are retained: the broker hands every layer over at each subscription, so a device that
        // was offline or is new converges on its first connection.
        let desiredSubscriptions = desiredTopics.keys.sorted()
        let subscriptions =
            [topics.control, configuration.control.fleetTopic]
            + configuration.control.groups.map { TopicScheme.groupControl($0) } + desiredSubscriptions
        let subscriptionQoS = Self.subscriptionQoS(configuration.mqtt)
        let inbox = ControlInbox(counters: connections)
        let maximumPacketSize = InboundLimits.maximumPacketSize(
            subscriptions: subscriptions,
            maxCommandBytes: configuration.control.maxPayloadBytes
        )
        let connectOptions = Self.connectOptions(
            configuration,
            password: password,
            will: topics.status,
            maximumPacketSize: maximumPacketSize,
            composer: composer
        )
        let estimatorStore = EstimatorStateStore(state: state, logger: logger)
        var services: [any Service] = [
            AgentLifecycleService(
                host: host,
                startup: startup,
                bootCount: bootCount,
                controller: controller,
                estimatorStore: estimatorStore,
                outbox: outbox,
                publisher: publisher,
                health: health,
                deviceID: configuration.device.id,
                sourceSummary: source.summary,
                logger: logger
            ),
            ConnectionSupervisorService(
                mqtt: configuration.mqtt,
                deviceID: configuration.device.id,
                connectOptions: connectOptions,
                broker: broker,
                inbox: inbox,
                control: control,
                subscriptions: subscriptions,
                subscriptionQoS: subscriptionQoS,
                status: status,
                publisher: publisher,
                operations: operations,
                health: health,
                startup: startup,
                drainTimeout: options.drainTimeout,
                backoffSeed: seed,
                clock: clock,
                taskExecutor: options.taskExecutor,
                logger: logger
            ),
            ControlService(
                control: control,
                inbox: inbox,
                broker: broker,
                status: status,
                desiredTopics: desiredSubscriptions,
                subscriptionQoS: subscriptionQoS,
                connections: connections,
                dropReport: InboundDropReport(
                    maximumPacketSize: maximumPacketSize,
                    queueBytes: InboundLimits.clientQueueBytes + InboundLimits.inboxBytes
                ),
                deviceFaults: deviceFaults.stream,
                startup: startup,
                clock: clock,
                reloadsOnHangup: options.reloadsOnHangup,
                logger: logger
            ),
        ]
        var sparkplugService: SparkplugService?
        if let sparkplugLane, let sparkplugBroker {
            do {
                let service = try SparkplugService(
                    configuration: configuration,
                    baseOptions: try Self.sparkplugOptions(
                        connectOptions(0),
                        configuration.sparkplug,
                        password: sparkplugPassword
                    ),
                    broker: sparkplugBroker,
                    lane: sparkplugLane,
                    controller: controller,
                    control: control,
                    status: status,
                    state: state,
                    startup: startup,
                    drainTimeout: options.drainTimeout,
                    drive: options.publisherDrive,
                    backoffSeed: seed &+ 1,
                    clock: clock,
                    taskExecutor: options.taskExecutor,
                    logger: logger
                )
                services.append(service)
                sparkplugService = service
            } catch {
                logger.error("Sparkplug is not started: \(error)")
            }
        }
        services += [
            OutboxPublisherService(
                publisher: publisher,
                controller: controller,
                health: health,
                status: status,
                startup: startup,
                drainTimeout: options.drainTimeout,
                logger: logger
            ),
            MetricsService(
                operations: operations,
                interval: { reconciler.effective.metrics.intervalS },
                counters: { [source] in
                    HealthCounters(
                        outbox: outbox.snapshot,
                        hub: hub.counters,
                        devices: source.deviceCounters(),
                        durable: publisher.durableCounters
                    )
                },
                startup: startup
            ),
        ]
        if let history { services.append(HistoryService(history: history, startup: startup, clock: clock)) }
        services += [
            EstimatorStateService(controller: controller, store: estimatorStore, startup: startup, clock: clock),
            AcquisitionService(
                source: source,
                hub: hub,
                startup: startup,
                backoffSeed: seed &+ 2,
                clock: clock,
                logger: logger
            ),
            WatchdogService(
                host: host,
                hub: hub,
                controller: controller,
                startup: startup,
                clock: clock,
                logger: logger
            ),
        ]
        return AgentServices(
            services: services,
            parts: AgentServices.Parts(
                publisher: publisher,
                controller: controller,
                reconciler: reconciler,
                outbox: outbox,
                hub: hub,
                sparkplug: sparkplugService
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
    private static func connectOptions(
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
    private static func sparkplugOptions(
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
    private func openSparkplugLane(_ configuration: AgentConfiguration) -> SparkplugLane? {
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

/// Lets the pipeline, built before the durable outbox (which needs its outbox and the publisher), reach it.
private final class DurableOutboxBox: @unchecked Sendable {
    // Set once in build(), before the controller starts; read-only afterwards.
    var outbox: DurableOutbox?
}
