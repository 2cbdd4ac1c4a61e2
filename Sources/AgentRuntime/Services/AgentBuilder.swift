import AgentConfig
import AgentControl
import AgentPipeline
import AgentPorts
import Foundation
import Integrations
import Logging
import MotionEstimation
import MotionWire

/// Wires the agent — source → hub → streams → outbox → publisher → broker, the controller, the control door,
/// the history and the operator's reports — and returns its services in the order of one `ServiceGroup`.
public struct AgentBuilder {
    public struct Options: Sendable {
        /// Seconds the shutdown may spend handing queued messages to the broker.
        public var drainTimeout: Double = 3
        /// The in-memory outbox: about 20 s of every stream at 1 kHz input while the broker is away.
        public var outboxBytes: Int = 2 << 20
        public init() {}
    }

    public var configuration: AgentConfiguration
    public var source: SensorSource
    public var broker: BrokerClient
    public var stateDirectory: String
    public var password: String?
    /// The file `reload-config` and SIGHUP re-read; nil when the agent is built without one.
    public var configurationPath: String?
    public var hmacKey: [UInt8]?
    public var host: HostSystem
    public var logger: Logger
    public var options: Options

    public init(
        configuration: AgentConfiguration,
        source: SensorSource,
        broker: BrokerClient,
        stateDirectory: String,
        password: String?,
        configurationPath: String? = nil,
        hmacKey: [UInt8]? = nil,
        host: HostSystem,
        logger: Logger,
        options: Options = Options()
    ) {
        self.configuration = configuration
        self.source = source
        self.broker = broker
        self.stateDirectory = stateDirectory
        self.password = password
        self.configurationPath = configurationPath
        self.hmacKey = hmacKey
        self.host = host
        self.logger = logger
        self.options = options
    }

    public func build() -> AgentServices {
        // config.yaml under the desired layers and command overrides the state directory kept: what this run
        // starts with, whether or not the broker is reachable.
        let reconciler = ConfigurationReconciler(
            base: configuration,
            store: configuration.control.persist ? DesiredStateStore(stateDirectory: stateDirectory) : nil,
            now: WallClock.realtimeNow(),
            logger: logger
        )
        let configuration = reconciler.effective
        let topics = TopicScheme(root: configuration.resolvedTopicRoot)
        let topicTable = TopicTable()
        let host = self.host
        let operations = AgentOperations(
            configuration: configuration,
            topics: topics,
            broker: broker,
            stateDirectory: stateDirectory,
            host: host,
            logger: logger
        )
        let durable = openDurableOutbox()
        let outbox = Outbox(capacityBytes: options.outboxBytes, durableStaging: durable?.staging)
        let faultBox = FaultForwarder()
        let field = geomagneticField()
        let declination = field?.declinationDegrees
        let catalog = StreamCatalog(
            configuration: configuration,
            topics: topics,
            topicTable: topicTable,
            declinationDegrees: declination,
            headingUsability: field?.headingUsability
        )
        let hub = SensorHub(
            outbox: outbox,
            clock: WallClock(isSynchronized: { host.isClockSynchronized() }),
            faults: { faultBox.forward($0) }
        )
        let controller = AgentController(
            configuration: configuration,
            source: source,
            hub: hub,
            topics: topics,
            topicTable: topicTable,
            streamFactory: { [catalog] in catalog.make($0, $1) },
            locationConfigured: declination != nil,
            headingUnusable: field?.headingUsability == .unusable,
            clockSynchronized: { host.isClockSynchronized() },
            referenceAttitudeStore: configuration.control.persist
                ? ReferenceAttitudeStore(stateDirectory: stateDirectory, logger: logger) : nil,
            logger: logger
        )
        let publisher = OutboxPublisher(
            outbox: outbox,
            topics: topicTable,
            broker: broker,
            window: configuration.mqtt.maxInflight,
            durable: durable,
            logger: logger
        )
        let bootCount = SharedCounter()
        let history = HistoryRecorder.open(
            stateDirectory: stateDirectory,
            retentionDays: configuration.pedometer.historyRetentionDays,
            controller: controller,
            logger: logger
        )
        var controlSettings = ControlPlane.Settings()
        controlSettings.maxAgeSeconds = Double(configuration.control.maxAgeSeconds)
        controlSettings.ratePerSecond = configuration.control.rateLimitPerSecond
        controlSettings.burst = Double(configuration.control.rateLimitBurst)
        controlSettings.maxPayloadBytes = configuration.control.maxPayloadBytes
        controlSettings.hmacKey = hmacKey
        var desiredTopics: [String: ConfigurationLayer] = [
            topics.desired: .device, configuration.control.fleetDesiredTopic: .fleet,
        ]
        for group in configuration.control.groups { desiredTopics[TopicScheme.groupDesired(group)] = .group(group) }
        let control = ControlPlane(
            controller: controller,
            history: history,
            reconciler: reconciler,
            desiredTopics: desiredTopics,
            topics: topics,
            deviceID: configuration.device.id,
            settings: controlSettings,
            clockSynchronized: { host.isClockSynchronized() },
            statusDocument: { [controller, outbox, publisher, operations] in
                AgentContext.composeStatus(
                    state: .online,
                    reason: nil,
                    bootCount: bootCount.value,
                    controller: controller,
                    outbox: outbox,
                    publisher: publisher,
                    configuration: reconciler.status(notes:),
                    broker: operations.connections.link
                )
            },
            reloadConfiguration: { [controller, reconciler, configurationPath] in
                try ConfigurationReload.apply(path: configurationPath, reconciler: reconciler, controller: controller)
            },
            inboundDropped: { [operations] in operations.connections.inboundDropped },
            logger: logger
        )
        let deviceFaults = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        faultBox.target = { [controller, logger] fault in
            controller.recordFault(fault)
            deviceFaults.continuation.yield()
            if fault.recovered {
                logger.notice("sensor device recovered", metadata: ["iio.device": "\(fault.deviceID)"])
            } else {
                logger.error("sensor device fault: \(fault.message)", metadata: ["iio.device": "\(fault.deviceID)"])
            }
        }
        let context = AgentContext(
            configuration: configuration,
            source: source,
            broker: broker,
            host: host,
            logger: logger,
            options: options,
            password: password,
            configurationPath: configurationPath,
            topics: topics,
            outbox: outbox,
            hub: hub,
            controller: controller,
            publisher: publisher,
            history: history,
            operations: operations,
            control: control,
            estimatorStore: EstimatorStateStore(stateDirectory: stateDirectory, logger: logger),
            // Desired documents are retained: the broker hands every layer over at each subscription, so a
            // device that was offline or is new converges on its first connection.
            controlTopics: [topics.control, configuration.control.fleetTopic]
                + configuration.control.groups.map { TopicScheme.groupControl($0) }
                + desiredTopics.keys.sorted() + [topics.desiredProbe],
            bootCount: bootCount,
            inbox: ControlInbox(counters: operations.connections),
            deviceFaults: deviceFaults.stream
        )
        return AgentServices(context: context)
    }

    /// The durable log when some stream asks for one; nil (after saying why) when it cannot be opened.
    private func openDurableOutbox() -> OutboxPublisher.Durable? {
        guard configuration.streams.values.contains(where: { $0.durable && $0.qos > 0 }) else { return nil }
        do {
            let log = try DurableLog(
                directory: stateDirectory + "/outbox",
                maxBytes: configuration.outbox.maxBytes,
                maxAgeSeconds: Double(configuration.outbox.maxAgeSeconds),
                logger: logger
            )
            return OutboxPublisher.Durable(
                staging: Outbox(capacityBytes: options.outboxBytes),
                log: log,
                replayRate: Double(configuration.outbox.replayRate)
            )
        } catch {
            logger.error("\(error) — durable streams are kept in memory only")
            return nil
        }
    }

    /// The geomagnetic field at the configured location, for true north and heading usability.
    private func geomagneticField() -> WorldMagneticModel.GeomagneticField? {
        let found: WorldMagneticModel.GeomagneticField?
        do {
            found = try StreamCatalog.field(for: configuration.location, on: WallClock.realtimeNow())
        } catch {
            logger.error(
                "no magnetic declination for the configured location: \(error) — xTrueNorthZVertical is unavailable"
            )
            return nil
        }
        guard let field = found else { return nil }
        if field.headingUsability != .normal {
            logger.warning(
                "the horizontal geomagnetic field at the configured location is \(Int(field.horizontalNanotesla)) nT: magnetic headings are \(field.headingUsability == .unusable ? "unusable (below 2000 nT)" : "degraded (below 6000 nT)")"
            )
        }
        return field
    }
}
