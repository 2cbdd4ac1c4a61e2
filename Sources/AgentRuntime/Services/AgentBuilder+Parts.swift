import AgentConfig
import AgentControl
import AgentPipeline
import AgentPorts
import Foundation
import Integrations
import Logging
import MotionWire
import ServiceLifecycle
import SparkplugB

/// The parts `AgentBuilder.build()` composes, in the order they are made. Each is a plain bundle of what later
/// parts use; its maker's parameters are the parts it needs.
extension AgentBuilder {
    /// config.yaml under the desired layers and command overrides the state directory kept: what this run starts
    /// with, whether or not the broker is reachable.
    struct Layers {
        let reconciler: ConfigurationReconciler
        /// Each desired topic and the layer it carries.
        let desiredTopics: [String: ConfigurationLayer]
        /// The configuration in force at the start.
        let configuration: AgentConfiguration
        /// Seeds this start's random choices (`Options.randomSeed`).
        let seed: UInt64
    }

    /// Source → hub → streams → outbox → publisher → broker, and the durable log beside the outbox.
    struct DataPath {
        let pipeline: Pipeline
        let publisher: OutboxPublisher
        let durableOutbox: DurableOutbox
        /// Yields when the source reports a fault or a recovery: the control service republishes the status.
        let deviceFaults: AsyncStream<Void>
        /// Sparkplug's lane, when `sparkplug.enabled` and a connection for it was given.
        let sparkplugLane: SparkplugLane?
        /// The fall awaiting a resolution, on its way to the state directory.
        let pendingFalls: PendingFallKeeper

        var controller: AgentController { pipeline.controller }
        var outbox: Outbox { pipeline.outbox }
        var hub: SensorHub { pipeline.hub }
        var topics: TopicScheme { pipeline.topics }
    }

    /// What reports on the agent: the start's boot count, the operations' counters, the history, the retained
    /// status, the health file, the estimators' kept state.
    struct Reports {
        let startup: AgentStartup
        let bootCount: SharedCounter
        let operations: AgentOperations
        let history: HistoryRecorder?
        let composer: StatusComposer
        let status: StatusPublisher
        let health: HealthReporter
        let estimatorStore: EstimatorStateStore
    }

    /// The one door control and configuration enter by, and what the connection subscribes to reach it.
    struct ControlDoor {
        let control: ControlPlane
        let inbox: ControlInbox
        /// Commands, groups, the desired layers: subscribed after every CONNACK.
        let subscriptions: [String]
        let desiredSubscriptions: [String]
        let subscriptionQoS: Int
        let maximumPacketSize: Int
        /// The options of every connection of this start, by its boot count (the will carries it).
        let connectOptions: @Sendable (UInt64) throws -> BrokerConnectOptions
    }

    func makeLayers() -> Layers {
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
        return Layers(
            reconciler: reconciler,
            desiredTopics: desiredTopics,
            configuration: reconciler.effective,
            seed: options.randomSeed ?? UInt64.random(in: .min ... .max)
        )
    }

    func makeDataPath(_ layers: Layers) -> DataPath {
        let (configuration, reconciler) = (layers.configuration, layers.reconciler)
        let (host, logger, clock) = (self.host, self.logger, self.clock)
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
        let pendingFalls = PendingFallKeeper(store: PendingFallStore(state: state, logger: logger))
        pipelineOptions.pendingFallKeeper = pendingFalls
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
        let publisher = OutboxPublisher(
            outbox: pipeline.outbox,
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
            memory: pipeline.outbox,
            clock: clock,
            logger: logger
        )
        durableOutbox.attach(publisher)
        durableOutboxBox.outbox = durableOutbox
        return DataPath(
            pipeline: pipeline,
            publisher: publisher,
            durableOutbox: durableOutbox,
            deviceFaults: deviceFaults.stream,
            sparkplugLane: sparkplugLane,
            pendingFalls: pendingFalls
        )
    }

    func makeReports(_ layers: Layers, _ data: DataPath) -> Reports {
        let configuration = layers.configuration
        let startup = AgentStartup()
        let bootCount = SharedCounter()
        let operations = AgentOperations(
            configuration: configuration,
            topics: data.topics,
            broker: broker,
            state: state,
            host: host,
            clock: clock,
            logger: logger
        )
        let history = HistoryRecorder.open(
            state: state,
            retentionDays: configuration.pedometer.historyRetentionDays,
            controller: data.controller,
            clock: clock,
            logger: logger
        )
        let composer = StatusComposer(
            controller: data.controller,
            outbox: data.outbox,
            publisher: data.publisher,
            reconciler: layers.reconciler,
            durableOutbox: data.durableOutbox,
            connections: operations.connections,
            bootCount: bootCount
        )
        return Reports(
            startup: startup,
            bootCount: bootCount,
            operations: operations,
            history: history,
            composer: composer,
            status: StatusPublisher(composer: composer, broker: broker, topics: data.topics, logger: logger),
            health: HealthReporter(
                host: host,
                connections: operations.connections,
                publisher: data.publisher,
                firstServer: configuration.mqtt.endpoints[0].description,
                clock: clock,
                logger: logger
            ),
            estimatorStore: EstimatorStateStore(state: state, logger: logger)
        )
    }

    func makeControlDoor(_ layers: Layers, _ data: DataPath, _ reports: Reports) -> ControlDoor {
        let (configuration, reconciler, controller) = (layers.configuration, layers.reconciler, data.controller)
        let (host, clock, composer) = (self.host, self.clock, reports.composer)
        var controlSettings = ControlPlane.Settings()
        controlSettings.maxAgeSeconds = Double(configuration.control.maxAgeSeconds)
        controlSettings.ratePerSecond = configuration.control.rateLimitPerSecond
        controlSettings.burst = Double(configuration.control.rateLimitBurst)
        controlSettings.maxPayloadBytes = configuration.control.maxPayloadBytes
        controlSettings.keys = trustedKeys
        controlSettings.counterStore = configuration.control.persist ? state : nil
        let control = ControlPlane(
            controller: controller,
            history: reports.history,
            reconciler: reconciler,
            desiredTopics: layers.desiredTopics,
            topics: data.topics,
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
        let desiredSubscriptions = layers.desiredTopics.keys.sorted()
        let subscriptions =
            [data.topics.control, configuration.control.fleetTopic]
            + configuration.control.groups.map { TopicScheme.groupControl($0) } + desiredSubscriptions
        let maximumPacketSize = InboundLimits.maximumPacketSize(
            subscriptions: subscriptions,
            maxCommandBytes: configuration.control.maxPayloadBytes
        )
        return ControlDoor(
            control: control,
            inbox: ControlInbox(counters: reports.operations.connections),
            subscriptions: subscriptions,
            desiredSubscriptions: desiredSubscriptions,
            subscriptionQoS: Self.subscriptionQoS(configuration.mqtt),
            maximumPacketSize: maximumPacketSize,
            connectOptions: Self.connectOptions(
                configuration,
                password: password,
                will: data.topics.status,
                maximumPacketSize: maximumPacketSize,
                composer: composer
            )
        )
    }

    /// The Sparkplug edge node's service, when its lane and connection exist; nil (said) when it cannot start.
    func makeSparkplug(_ layers: Layers, _ data: DataPath, _ reports: Reports, _ door: ControlDoor) -> SparkplugService?
    {
        guard let lane = data.sparkplugLane, let sparkplugBroker else { return nil }
        do {
            return try SparkplugService(
                configuration: layers.configuration,
                baseOptions: try Self.sparkplugOptions(
                    door.connectOptions(0),
                    layers.configuration.sparkplug,
                    password: sparkplugPassword
                ),
                broker: sparkplugBroker,
                lane: lane,
                controller: data.controller,
                control: door.control,
                status: reports.status,
                state: state,
                startup: reports.startup,
                drainTimeout: options.drainTimeout,
                drive: options.publisherDrive,
                backoffSeed: layers.seed &+ 1,
                clock: clock,
                taskExecutor: options.taskExecutor,
                logger: logger
            )
        } catch {
            logger.error("Sparkplug is not started: \(error)")
            return nil
        }
    }

    /// The services in `ServiceGroup` order (AgentServices: the shutdown runs it backwards).
    func makeServices(
        _ layers: Layers,
        _ data: DataPath,
        _ reports: Reports,
        _ door: ControlDoor,
        sparkplug: SparkplugService?
    ) -> [any Service] {
        let configuration = layers.configuration
        let (outbox, hub, publisher, source) = (data.outbox, data.hub, data.publisher, self.source)
        var services: [any Service] = [
            AgentLifecycleService(
                host: host,
                startup: reports.startup,
                bootCount: reports.bootCount,
                controller: data.controller,
                estimatorStore: reports.estimatorStore,
                outbox: outbox,
                publisher: publisher,
                health: reports.health,
                deviceID: configuration.device.id,
                sourceSummary: source.summary,
                logger: logger
            ),
            ConnectionSupervisorService(
                mqtt: configuration.mqtt,
                deviceID: configuration.device.id,
                connectOptions: door.connectOptions,
                broker: broker,
                inbox: door.inbox,
                control: door.control,
                subscriptions: door.subscriptions,
                subscriptionQoS: door.subscriptionQoS,
                status: reports.status,
                publisher: publisher,
                operations: reports.operations,
                health: reports.health,
                startup: reports.startup,
                drainTimeout: options.drainTimeout,
                backoffSeed: layers.seed,
                clock: clock,
                taskExecutor: options.taskExecutor,
                logger: logger
            ),
            ControlService(
                control: door.control,
                inbox: door.inbox,
                broker: broker,
                status: reports.status,
                desiredTopics: door.desiredSubscriptions,
                subscriptionQoS: door.subscriptionQoS,
                connections: reports.operations.connections,
                dropReport: InboundDropReport(
                    maximumPacketSize: door.maximumPacketSize,
                    queueBytes: InboundLimits.clientQueueBytes + InboundLimits.inboxBytes
                ),
                deviceFaults: data.deviceFaults,
                startup: reports.startup,
                clock: clock,
                reloadsOnHangup: options.reloadsOnHangup,
                logger: logger
            ),
        ]
        if let sparkplug { services.append(sparkplug) }
        let reconciler = layers.reconciler
        services += [
            OutboxPublisherService(
                publisher: publisher,
                controller: data.controller,
                health: reports.health,
                status: reports.status,
                startup: reports.startup,
                drainTimeout: options.drainTimeout,
                logger: logger
            ),
            MetricsService(
                operations: reports.operations,
                interval: { reconciler.effective.metrics.intervalS },
                counters: {
                    HealthCounters(
                        outbox: outbox.snapshot,
                        hub: hub.counters,
                        devices: source.deviceCounters(),
                        durable: publisher.durableCounters
                    )
                },
                startup: reports.startup
            ),
        ]
        if let history = reports.history {
            services.append(HistoryService(history: history, startup: reports.startup, clock: clock))
        }
        services += [
            EstimatorStateService(
                controller: data.controller,
                store: reports.estimatorStore,
                pendingFalls: data.pendingFalls,
                startup: reports.startup,
                clock: clock
            ),
            AcquisitionService(
                source: source,
                hub: hub,
                startup: reports.startup,
                backoffSeed: layers.seed &+ 2,
                clock: clock,
                logger: logger
            ),
            WatchdogService(
                host: host,
                hub: hub,
                controller: data.controller,
                startup: reports.startup,
                clock: clock,
                logger: logger
            ),
        ]
        return services
    }
}

/// Lets the pipeline, built before the durable outbox (which needs its outbox and the publisher), reach it.
private final class DurableOutboxBox: @unchecked Sendable {
    // Set once in makeDataPath(), before the controller starts; read-only afterwards.
    var outbox: DurableOutbox?
}
