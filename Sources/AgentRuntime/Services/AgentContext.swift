import AgentConfig
import AgentControl
import AgentPipeline
import AgentPorts
import Foundation
import Integrations
import Logging
import MotionWire
import Synchronization

/// The wired agent that every service shares: configuration, ports, the pipeline (hub → outbox → publisher),
/// the controller and the control door, and the few acts several services perform (the status, the health
/// file, the connect options). `AgentBuilder` makes it; nothing here runs a task.
final class AgentContext: Sendable {
    let configuration: AgentConfiguration
    let source: SensorSource
    let broker: BrokerClient
    let host: HostSystem
    let logger: Logger
    let options: AgentBuilder.Options
    let password: String?
    /// The file `reload-config` and SIGHUP re-read; nil when the agent was built without one.
    let configurationPath: String?

    let topics: TopicScheme
    let outbox: Outbox
    let hub: SensorHub
    let controller: AgentController
    let publisher: OutboxPublisher
    let history: HistoryRecorder?
    let operations: AgentOperations
    let control: ControlPlane
    let estimatorStore: EstimatorStateStore
    /// Topics the agent takes commands from: its own, the fleet's and its groups'.
    let controlTopics: [String]
    let bootCount: SharedCounter
    let startup = AgentStartup()
    /// Held while a status is composed and published (`publishCurrentStatus`).
    private let statusPublication = Mutex(())
    /// The health document last written, so a storage change rewrites it with the connection as it was.
    private let lastHealth = Mutex<HealthDocument?>(nil)
    /// Inbound messages on their way from the connection supervisor to the control service.
    let inbox: ControlInbox
    /// One element per device fault or recovery, so the status is republished with `devices[].error`
    /// (the acquisition thread only yields; the control service publishes).
    let deviceFaults: AsyncStream<Void>

    init(
        configuration: AgentConfiguration,
        source: SensorSource,
        broker: BrokerClient,
        host: HostSystem,
        logger: Logger,
        options: AgentBuilder.Options,
        password: String?,
        configurationPath: String?,
        topics: TopicScheme,
        outbox: Outbox,
        hub: SensorHub,
        controller: AgentController,
        publisher: OutboxPublisher,
        history: HistoryRecorder?,
        operations: AgentOperations,
        control: ControlPlane,
        estimatorStore: EstimatorStateStore,
        controlTopics: [String],
        bootCount: SharedCounter,
        inbox: ControlInbox,
        deviceFaults: AsyncStream<Void>
    ) {
        self.configuration = configuration
        self.source = source
        self.broker = broker
        self.host = host
        self.logger = logger
        self.options = options
        self.password = password
        self.configurationPath = configurationPath
        self.topics = topics
        self.outbox = outbox
        self.hub = hub
        self.controller = controller
        self.publisher = publisher
        self.history = history
        self.operations = operations
        self.control = control
        self.estimatorStore = estimatorStore
        self.controlTopics = controlTopics
        self.bootCount = bootCount
        self.inbox = inbox
        self.deviceFaults = deviceFaults
    }

    /// The status document with the outbox's counters.
    func status(state: AgentStatus.State, reason: String?) -> AgentStatus {
        Self.composeStatus(
            state: state,
            reason: reason,
            bootCount: bootCount.value,
            controller: controller,
            outbox: outbox,
            publisher: publisher,
            configuration: control.configurationStatus(notes:),
            broker: operations.connections.link
        )
    }

    /// The one place the status document is composed — the controller's state, the outbox's counters and the
    /// configuration's account — for the retained status and the control door's `status` reply alike.
    static func composeStatus(
        state: AgentStatus.State,
        reason: String?,
        bootCount: UInt64,
        controller: AgentController,
        outbox: Outbox,
        publisher: OutboxPublisher,
        configuration: (_ notes: [String: String]) -> ConfigurationStatus,
        broker: BrokerLink? = nil
    ) -> AgentStatus {
        var status = controller.status(state: state, reason: reason, bootCount: bootCount)
        status.outbox = OutboxStatus(memory: outbox.snapshot, durable: publisher.durableCounters)
        // Above the maximum the stream is clamped; below it, a rate the driver does not offer is decimated.
        status.configuration = configuration(
            status.hardwareNotes.merging(controller.offeredRateNotes()) { clamped, _ in clamped }
        )
        status.broker = broker
        return status
    }

    /// Composes the status and publishes it under one lock: two publishers racing (the birth after CONNACK
    /// and the republication after a desired document that arrived right after subscribing) could otherwise
    /// compose in one order and publish in the other, leaving an older state as the retained status.
    func publishCurrentStatus(state: AgentStatus.State, reason: String?) {
        statusPublication.withLock { _ in publishStatus(status(state: state, reason: reason)) }
    }

    /// The retained status goes straight to the client (not through the outbox): it must be the first
    /// message after CONNACK, ahead of anything queued during the outage.
    func publishStatus(_ status: AgentStatus) {
        do {
            let bytes = try Self.encoder.encode(status)
            try bytes.withUnsafeBytes { raw in
                _ = try broker.publish(topic: topics.status, payload: raw, qos: 1, retain: true)
            }
        } catch {
            logger.error("publishing status failed: \(error)")
        }
    }

    /// Publishes the probe that closes a desired-state snapshot (`ControlPlane.beginDesiredSnapshot`, begun
    /// before the SUBSCRIBE it follows). Not retained: it only marks where the retained documents end.
    func publishDesiredProbe(_ token: [UInt8]) {
        do {
            _ = try token.withUnsafeBytes {
                try broker.publish(topic: topics.desiredProbe, payload: $0, qos: 1, retain: false)
            }
        } catch {
            logger.warning(
                "cannot publish the desired-state probe on \(topics.desiredProbe): \(error) — a desired layer cleared while this device was away stays in force until the next connection"
            )
        }
    }

    func writeHealth(
        _ state: HealthDocument.State,
        broker: String? = nil,
        lastError: String?,
        failures: Int,
        retryIn: Double?
    ) {
        let now = WallClock.realtimeNow()
        let document = HealthDocument(
            state: state,
            broker: broker ?? operations.connections.link?.server ?? configuration.mqtt.endpoints[0].description,
            lastError: lastError,
            consecutiveFailures: failures,
            nextRetryTime: retryIn.map { now + $0 },
            time: now,
            storageProblem: publisher.durableCounters?.storageProblem
        )
        lastHealth.withLock { $0 = document }
        if let error = host.writeHealth(document) {
            logger.warning("cannot write \(host.healthPath): \(error)")
        }
    }

    /// Watches the durable log's storage (every second) and, when its problem starts, changes or ends, says so
    /// where operators look without the broker — health.json — and, when connected, in the retained status.
    /// The log itself logs the problem once when it starts.
    func watchStorage() async {
        var reported: String?
        while (try? await Task.sleep(for: .seconds(1))) != nil {
            let problem = publisher.durableCounters?.storageProblem
            guard problem != reported else { continue }
            reported = problem
            if let last = lastHealth.withLock({ $0 }) {
                var document = last
                document.time = WallClock.realtimeNow()
                document.storageProblem = problem
                lastHealth.withLock { $0 = document }
                if let error = host.writeHealth(document) {
                    // On a full disk this can fail too: the log line and the status still say it.
                    logger.warning("cannot write \(host.healthPath): \(error)")
                }
            }
            if broker.isConnected { publishCurrentStatus(state: .online, reason: nil) }
        }
    }

    func connectOptions(bootCount: UInt64) throws -> BrokerConnectOptions {
        let mqtt = configuration.mqtt
        var will = controller.status(state: .offline, reason: "connection lost", bootCount: bootCount)
        // The will is fixed at connect time: keep it small and free of values that go stale.
        will.streams = nil
        will.devices = nil
        will.sensors = nil
        will.source = nil
        let willBytes = try Self.encoder.encode(will)
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
            will: BrokerWill(topic: topics.status, payload: Array(willBytes), qos: 1, retain: true),
            maxInflightMessages: mqtt.maxInflight,
            sessionExpirySeconds: UInt32(clamping: mqtt.sessionExpirySeconds)
        )
    }

    /// The outbox's, the hub's and the source's devices' counters, read under their locks (small copies, once
    /// per metrics interval).
    func healthCounters() -> HealthCounters {
        HealthCounters(
            outbox: outbox.snapshot,
            hub: hub.counters,
            devices: source.deviceCounters(),
            durable: publisher.durableCounters
        )
    }

    private static var encoder: JSONEncoder {
        let e = JSONEncoder()
        e.outputFormatting = [.sortedKeys]
        return e
    }
}
