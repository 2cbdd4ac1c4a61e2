import AgentConfig
import AgentPorts
import Foundation
import Logging
import MotionEstimation
import MotionModel
import ServiceLifecycle
import Synchronization
import UnixSignals

/// The running agent: source → hub → streams → outbox → broker, with the birth/will status, reconnects owned
/// here (jittered exponential back-off), and a clean goodbye on SIGTERM/SIGINT.
public final class MotionAgent: Service, Sendable {
    public struct Options: Sendable {
        /// Seconds the shutdown may spend handing queued messages to the broker.
        public var drainTimeout: Double = 3
        /// The in-memory outbox: about 20 s of every stream at 1 kHz input while the broker is away.
        public var outboxBytes: Int = 2 << 20
        public init() {}
    }

    private let configuration: AgentConfiguration
    let source: SensorSource
    private let broker: BrokerClient
    private let stateDirectory: String
    private let password: String?
    /// The file `reload-config` and SIGHUP re-read; nil when the agent was built without one.
    private let configurationPath: String?
    private let logger: Logger
    private let options: Options

    private let outbox: Outbox
    private let host: HostSystem
    private let topicTable = TopicTable()
    private let topics: TopicScheme
    private let hub: SensorHub
    public let controller: AgentController
    private let publisher: OutboxPublisher
    private let bootCount = SharedCounter()
    /// Set when the shutdown begins: the supervisor keeps taking acknowledgements while the outbox drains,
    /// but no longer reconnects.
    private let shuttingDown = Atomic<Bool>(false)
    private let control: ControlPlane
    private let history: HistoryRecorder?
    private let operations: AgentOperations
    /// Topics the agent takes commands from: its own, the fleet's and its groups'.
    private let controlTopics: [String]
    /// One element per device fault or recovery, so the status is republished with `devices[].error`
    /// (the acquisition thread only yields; the task that publishes runs in `run`).
    private let deviceFaults: (stream: AsyncStream<Void>, continuation: AsyncStream<Void>.Continuation) =
        AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))

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
        self.configurationPath = configurationPath
        self.configuration = configuration
        self.source = source
        self.broker = broker
        self.stateDirectory = stateDirectory
        self.password = password
        self.logger = logger
        self.options = options
        self.host = host
        topics = TopicScheme(root: configuration.resolvedTopicRoot)
        operations = AgentOperations(
            configuration: configuration,
            topics: topics,
            broker: broker,
            stateDirectory: stateDirectory,
            host: host,
            logger: logger
        )
        var durable: OutboxPublisher.Durable?
        if configuration.streams.values.contains(where: { $0.durable && $0.qos > 0 }) {
            do {
                let log = try DurableLog(
                    directory: stateDirectory + "/outbox",
                    maxBytes: configuration.outbox.maxBytes,
                    maxAgeSeconds: Double(configuration.outbox.maxAgeSeconds),
                    logger: logger
                )
                durable = OutboxPublisher.Durable(
                    staging: Outbox(capacityBytes: options.outboxBytes),
                    log: log,
                    replayRate: Double(configuration.outbox.replayRate)
                )
            } catch {
                logger.error("\(error) — durable streams are kept in memory only")
            }
        }
        outbox = Outbox(capacityBytes: options.outboxBytes, durableStaging: durable?.staging)
        let faultBox = FaultForwarder()
        var field: WorldMagneticModel.GeomagneticField?
        do {
            field = try StreamCatalog.field(for: configuration.location, on: WallClock.realtimeNow())
        } catch {
            logger.error(
                "no magnetic declination for the configured location: \(error) — xTrueNorthZVertical is unavailable"
            )
        }
        let declination = field?.declinationDegrees
        if let field, field.headingUsability != .normal {
            logger.warning(
                "the horizontal geomagnetic field at the configured location is \(Int(field.horizontalNanotesla)) nT: magnetic headings are \(field.headingUsability == .unusable ? "unusable (below 2000 nT)" : "degraded (below 6000 nT)")"
            )
        }
        let catalog = StreamCatalog(
            configuration: configuration,
            topics: topics,
            topicTable: topicTable,
            declinationDegrees: declination,
            headingUsability: field?.headingUsability
        )
        hub = SensorHub(
            outbox: outbox,
            clock: WallClock(isSynchronized: { host.isClockSynchronized() }),
            faults: { faultBox.forward($0) }
        )
        controller = AgentController(
            configuration: configuration,
            source: source,
            hub: hub,
            topics: topics,
            topicTable: topicTable,
            persistencePath: configuration.control.persist ? stateDirectory + "/streams.json" : nil,
            streamFactory: { [catalog] in catalog.make($0, $1) },
            locationConfigured: declination != nil,
            headingUnusable: field?.headingUsability == .unusable,
            clockSynchronized: { host.isClockSynchronized() },
            logger: logger
        )
        publisher = OutboxPublisher(
            outbox: outbox,
            topics: topicTable,
            broker: broker,
            window: configuration.mqtt.maxInflight,
            durable: durable,
            logger: logger
        )
        let bootCount = self.bootCount
        let history = HistoryRecorder.open(
            stateDirectory: stateDirectory,
            retentionDays: configuration.pedometer.historyRetentionDays,
            controller: controller,
            logger: logger
        )
        self.history = history
        var controlSettings = ControlPlane.Settings()
        controlSettings.maxAgeSeconds = Double(configuration.control.maxAgeSeconds)
        controlSettings.ratePerSecond = configuration.control.rateLimitPerSecond
        controlSettings.burst = Double(configuration.control.rateLimitBurst)
        controlSettings.maxPayloadBytes = configuration.control.maxPayloadBytes
        controlSettings.hmacKey = hmacKey
        control = ControlPlane(
            controller: controller,
            topics: topics,
            deviceID: configuration.device.id,
            settings: controlSettings,
            clockSynchronized: { host.isClockSynchronized() },
            statusDocument: { [controller, outbox, publisher] in
                var status = controller.status(state: .online, reason: nil, bootCount: bootCount.value)
                status.outbox = OutboxStatus(memory: outbox.snapshot, durable: publisher.durableCounters)
                return status
            },
            reloadConfiguration: { [controller, configuration, configurationPath] in
                try ConfigurationReload.apply(path: configurationPath, running: configuration, controller: controller)
            },
            logger: logger
        )
        controlTopics =
            [topics.control, configuration.control.fleetTopic]
            + configuration.control.groups.map { TopicScheme.groupControl($0) }
        faultBox.target = { [controller, logger, deviceFaults] fault in
            controller.recordFault(fault)
            deviceFaults.continuation.yield()
            if fault.recovered {
                logger.notice("sensor device recovered", metadata: ["iio.device": "\(fault.deviceID)"])
            } else {
                logger.error("sensor device fault: \(fault.message)", metadata: ["iio.device": "\(fault.deviceID)"])
            }
        }
    }

    public func run() async throws {
        let boot = try host.incrementBootCount()
        bootCount.value = boot
        logger.info(
            "motion-agent \(AgentVersion.version) starting",
            metadata: [
                "agent.device": "\(configuration.device.id)", "agent.boot": "\(boot)",
                "agent.source": "\(source.summary)",
            ]
        )
        try controller.start()
        let estimatorStore = EstimatorStateStore(stateDirectory: stateDirectory, logger: logger)
        if let saved = estimatorStore.load() {
            _ = controller.withDeviceMotion { $0.restore(saved) }
            logger.info("restored gyroscope bias and magnetometer calibration from \(estimatorStore.path)")
        }
        publisher.start()

        host.notifyServiceManager("READY=1\nSTATUS=acquiring from \(source.summary)")
        let options = try connectOptions(bootCount: boot)
        logger.info("connecting to mqtt://\(options.host):\(options.port) as \(options.clientID)")
        writeHealth(.connecting, lastError: nil, failures: 0, retryIn: nil)
        try? broker.connect(options)

        // Outside the group that graceful shutdown cancels: acknowledgements must still advance the durable
        // log's cursor while the outbox drains.
        let supervisor = Task { await self.superviseConnection(options: options) }
        await cancelWhenGracefulShutdown { [self] in
            await withDiscardingTaskGroup { group in
                group.addTask { await self.acquire() }
                group.addTask { await self.reloadOnHangup() }
                if let interval = self.host.watchdogIntervalSeconds {
                    group.addTask { await self.keepWatchdogFed(every: interval) }
                }
                group.addTask { await self.operations.reportMetrics(bootCount: boot) { self.healthCounters() } }
                if let history = self.history {
                    group.addTask {
                        while (try? await Task.sleep(for: .seconds(1))) != nil { history.poll() }
                    }
                }
                group.addTask {
                    for await _ in self.deviceFaults.stream where self.broker.isConnected {
                        self.publishStatus(self.status(state: .online, reason: nil))
                    }
                }
                group.addTask {
                    // What the estimators learned survives a crash, at most a minute old.
                    while (try? await Task.sleep(for: .seconds(60))) != nil {
                        if let state = self.controller.withDeviceMotion({ $0.persistentState }) {
                            estimatorStore.save(state)
                        }
                    }
                }
            }
        }

        if let state = controller.withDeviceMotion({ $0.persistentState }) { estimatorStore.save(state) }
        host.notifyServiceManager("STOPPING=1")
        history?.poll(force: true)
        controller.flushBatches()
        logger.info("shutting down: draining the outbox")
        await publisher.stop(drainTimeout: options.keepaliveSeconds > 0 ? self.options.drainTimeout : 0)
        if broker.isConnected {
            let goodbye = status(state: .offline, reason: "shutdown")
            publishStatus(goodbye)
        }
        shuttingDown.store(true, ordering: .sequentiallyConsistent)
        await broker.disconnect(flushTimeout: self.options.drainTimeout)
        supervisor.cancel()
        await supervisor.value
        let counters = outbox.snapshot
        logger.info(
            "stopped: \(counters.published) messages published, \(counters.depth) unsent, \(counters.droppedOverflow) dropped"
        )
        if let durable = publisher.durableCounters {
            logger.info(
                "durable outbox: \(durable.acknowledged) acknowledged, \(durable.depth) kept on disk for the next start, \(durable.dropped) dropped"
            )
        }
        writeHealth(.stopped, lastError: nil, failures: 0, retryIn: nil)
    }

    /// Runs the source until cancelled; if it fails, says why and tries again with back-off.
    private func acquire() async {
        var backoff = Backoff(base: 1, cap: 30, seed: UInt64(truncatingIfNeeded: ObjectIdentifier(self).hashValue))
        while !Task.isCancelled {
            do {
                try await source.run(into: hub)
                if Task.isCancelled { return }
                logger.notice("the sensor source ended; the agent keeps running and publishing status")
                try? await Task.sleep(for: .seconds(365 * 86400))
            } catch {
                if Task.isCancelled { return }
                let delay = backoff.next()
                logger.error("sensor source failed: \(error) — retrying in \(String(format: "%.1f", delay)) s")
                try? await Task.sleep(for: .seconds(delay))
            }
        }
    }

    /// Follows the connection: birth after every CONNACK, reconnects with jittered back-off after every loss.
    private func superviseConnection(options: BrokerConnectOptions) async {
        let mqtt = configuration.mqtt
        var backoff = Backoff(
            base: mqtt.reconnectMinDelay,
            cap: mqtt.reconnectMaxDelay,
            seed: UInt64(truncatingIfNeeded: configuration.device.id.hashValue)
        )
        var failures = 0
        for await event in broker.events {
            switch event {
            case .connected(let sessionPresent):
                backoff.reset()
                failures = 0
                writeHealth(.connected, lastError: nil, failures: 0, retryIn: nil)
                logger.info("connected to the broker", metadata: ["mqtt.session_present": "\(sessionPresent)"])
                publishStatus(status(state: .online, reason: nil))
                do {
                    try broker.subscribe(controlTopics, qos: 1)
                } catch {
                    logger.error(
                        "cannot subscribe to the control topics \(controlTopics): \(error) — commands will not reach this device"
                    )
                }
                publisher.setConnected(true)
                operations.connected()
            case .connectFailed(_, let reason, let isAuthorization):
                operations.connectFailed()
                publisher.setConnected(false)
                // Refused credentials will not fix themselves in a second: wait long, and say so.
                let delay = isAuthorization ? max(60, backoff.next()) : backoff.next()
                failures += 1
                // The reason names the fix already (MosquittoReasons: the user, the password file, the client id).
                writeHealth(
                    isAuthorization ? .refused : .connecting,
                    lastError: reason,
                    failures: failures,
                    retryIn: delay
                )
                logger.error("\(reason) — retrying in \(String(format: "%.1f", delay)) s")
                guard await sleep(delay), !shuttingDown.load(ordering: .acquiring) else { return }
                try? broker.connect(options)
            case .disconnected(let reason, let expected):
                publisher.setConnected(false)
                if expected { return }
                let delay = backoff.next()
                writeHealth(
                    .connecting,
                    lastError: "connection to the broker lost: \(reason)",
                    failures: failures,
                    retryIn: delay
                )
                logger.warning(
                    "connection to the broker lost: \(reason) — reconnecting in \(String(format: "%.1f", delay)) s"
                )
                guard await sleep(delay), !shuttingDown.load(ordering: .acquiring) else { return }
                try? broker.connect(options)
            case .delivered(let messageID):
                publisher.acknowledged(messageID: messageID)
            case .message(let message):
                guard let outcome = control.handle(message) else { continue }
                do {
                    try broker.publishResponse(
                        topic: outcome.replyTopic,
                        payload: outcome.payload,
                        correlationData: outcome.correlationData
                    )
                } catch {
                    logger.error("cannot send the reply to \(outcome.replyTopic): \(error)")
                }
                if outcome.stateChanged {
                    publishStatus(status(state: .online, reason: nil))
                }
            }
        }
    }

    /// Feeds systemd's watchdog only while acquisition is alive: samples keep arriving whenever some sensor
    /// is switched on. A wedged source thread stops the keep-alives and systemd restarts the agent.
    private func keepWatchdogFed(every interval: Double) async {
        var lastSamples = hub.counters.samples
        while await sleep(interval) {
            let samples = hub.counters.samples
            if samples != lastSamples || !controller.anySensorOn {
                host.notifyServiceManager("WATCHDOG=1")
            } else {
                logger.error(
                    "no samples for \(String(format: "%.0f", interval)) s while sensors are on: not feeding the systemd watchdog"
                )
            }
            lastSamples = samples
        }
    }

    /// SIGHUP re-reads config.yaml, like the reload-config command; an invalid file keeps the running
    /// configuration and says why.
    private func reloadOnHangup() async {
        for await _ in await UnixSignalsSequence(trapping: .sighup) {
            do {
                let result = try ConfigurationReload.perform(
                    path: configurationPath,
                    running: configuration,
                    controller: controller
                )
                logger.notice("SIGHUP: configuration reloaded: \(result["message"] ?? "")")
                if broker.isConnected {
                    publishStatus(status(state: .online, reason: nil))
                }
            } catch let failure as ControlFailure {
                logger.error("SIGHUP: \(failure.message)")
            } catch {
                logger.error("SIGHUP: reload failed: \(error)")
            }
        }
    }

    /// The status document with the outbox's counters.
    private func status(state: AgentStatus.State, reason: String?) -> AgentStatus {
        var status = controller.status(state: state, reason: reason, bootCount: bootCount.value)
        status.outbox = OutboxStatus(memory: outbox.snapshot, durable: publisher.durableCounters)
        return status
    }

    private func writeHealth(_ state: HealthDocument.State, lastError: String?, failures: Int, retryIn: Double?) {
        let mqtt = configuration.mqtt
        let now = WallClock.realtimeNow()
        let document = HealthDocument(
            state: state,
            broker: "\(mqtt.host):\(mqtt.port)",
            lastError: lastError,
            consecutiveFailures: failures,
            nextRetryTime: retryIn.map { now + $0 },
            time: now
        )
        if let error = host.writeHealth(document) {
            logger.warning("cannot write \(host.healthPath): \(error)")
        }
    }

    /// Sleeps unless cancelled; returns false when cancelled.
    private func sleep(_ seconds: Double) async -> Bool {
        do {
            try await Task.sleep(for: .seconds(seconds))
            return true
        } catch {
            return false
        }
    }

    /// The retained status goes straight to the client (not through the outbox): it must be the first
    /// message after CONNACK, ahead of anything queued during the outage.
    private func publishStatus(_ status: AgentStatus) {
        do {
            let bytes = try Self.encoder.encode(status)
            try bytes.withUnsafeBytes { raw in
                _ = try broker.publish(topic: topics.status, payload: raw, qos: 1, retain: true)
            }
        } catch {
            logger.error("publishing status failed: \(error)")
        }
    }

    private static var encoder: JSONEncoder {
        let e = JSONEncoder()
        e.outputFormatting = [.sortedKeys]
        return e
    }

    private func connectOptions(bootCount: UInt64) throws -> BrokerConnectOptions {
        let mqtt = configuration.mqtt
        let will = controller.status(state: .offline, reason: "connection lost", bootCount: bootCount)
        var willStatus = will
        // The will is fixed at connect time: keep it small and free of values that go stale.
        willStatus.streams = nil
        willStatus.devices = nil
        willStatus.sensors = nil
        willStatus.source = nil
        let willBytes = try Self.encoder.encode(willStatus)
        return BrokerConnectOptions(
            host: mqtt.host,
            port: mqtt.port,
            clientID: configuration.resolvedClientID,
            protocolVersion: mqtt.protocolVersion == .v5 ? .v5 : .v311,
            keepaliveSeconds: mqtt.keepalive,
            cleanSession: mqtt.cleanSession,
            username: mqtt.username,
            password: password,
            tls: mqtt.tls.map { BrokerTLS(caFile: $0.caFile, certFile: $0.certFile, keyFile: $0.keyFile) },
            will: BrokerWill(topic: topics.status, payload: Array(willBytes), qos: 1, retain: true),
            maxInflightMessages: mqtt.maxInflight
        )
    }

    /// Current counters, for status and tests.
    public var outboxCounters: Outbox.Counters { outbox.snapshot }
    public var durableCounters: DurableLog.Counters? { publisher.durableCounters }
    public var hubCounters: SensorHub.Counters { hub.counters }
}

/// Lets the hub, built before the controller, forward faults to it.
private final class FaultForwarder: @unchecked Sendable {
    // Set once in MotionAgent.init before any sample flows; read-only afterwards.
    var target: (@Sendable (SourceFault) -> Void)?
    func forward(_ fault: SourceFault) { target?(fault) }
}

/// A value shared between the runtime and closures it hands out.
final class SharedCounter: Sendable {
    private let storage = Atomic<UInt64>(0)
    var value: UInt64 {
        get { storage.load(ordering: .relaxed) }
        set { storage.store(newValue, ordering: .relaxed) }
    }
}
