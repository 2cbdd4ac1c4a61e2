import AgentConfig
import AgentPorts
import Logging
import MotionEstimation
import MotionModel

/// The data path, wired: source → hub → streams → outbox, with the controller that applies a configuration to
/// it. The one place it is put together, for the agent (`AgentBuilder`), `motion-agent process`
/// (`OfflineProcessor`) and the benchmarks alike, so all three run the same streams with the same settings.
package struct Pipeline: Sendable {
    package struct Options: Sendable {
        /// The in-memory outbox: about 20 s of every stream at 1 kHz input while the broker is away.
        package var outboxBytes: Int = 2 << 20
        /// Where durable streams' messages are staged before the durable log (nil: no stream is durable).
        package var durableStaging: Outbox?
        /// Whether they go there from the start; false: only once the durable log is open
        /// (`Outbox.routeDurableMessages`, which `DurableOutbox` calls).
        package var durableRoutedAtStart = true
        /// Called with every configuration the controller is about to run, at start and before each change:
        /// where resources a setting needs are opened (the durable log, `DurableOutbox.prepare`).
        package var prepare: @Sendable (AgentConfiguration) -> Void = { _ in }
        /// The agent's time source: sensor timestamps map to wall time through it, and the controller reads it.
        package var clock: any AgentClock = SystemClock()
        /// The host's clock synchronization, for the status and every message's wall time.
        package var clockSynchronized: @Sendable () -> Bool = { true }
        /// Called on the acquisition thread when the source reports a fault or a recovery (after the
        /// controller has recorded it).
        package var faults: @Sendable (SourceFault) -> Void = { _ in }
        /// Where the reference attitude's capture time is kept; nil: not kept.
        package var referenceAttitudeStore: ReferenceAttitudeStore?
        /// Where the fall awaiting a resolution is kept across restarts; nil: not kept.
        package var pendingFallKeeper: PendingFallKeeper?
        /// Sparkplug's lane (`sparkplug.enabled`); nil: the streams feed only their native topics.
        package var sparkplug: SparkplugLane?

        package init() {}
    }

    package let topics: TopicScheme
    package let topicTable: TopicTable
    package let outbox: Outbox
    package let hub: SensorHub
    package let controller: AgentController
    /// The geomagnetic field at the configured location (declination, heading usability); nil without a
    /// location or when the World Magnetic Model cannot answer (logged).
    package let field: WorldMagneticModel.GeomagneticField?

    /// - Parameter configuration: the configuration in force, read at every change (the reconciler's effective
    ///   configuration in the agent); its identity (device id, topic root) and location are read once here.
    package init(
        configuration: @escaping @Sendable () -> AgentConfiguration,
        source: SensorSource,
        options: Options = Options(),
        logger: Logger
    ) {
        let initial = configuration()
        topics = TopicScheme(root: initial.resolvedTopicRoot)
        topicTable = TopicTable()
        let clock = options.clock
        outbox = Outbox(
            capacityBytes: options.outboxBytes,
            durableStaging: options.durableStaging,
            routesDurable: options.durableRoutedAtStart,
            monotonicNanos: { UInt64(max(0, clock.monotonicSeconds() * 1e9)) }
        )
        field = Self.geomagneticField(initial.location, now: clock.realtimeSeconds(), logger: logger)
        let catalog = StreamCatalog(
            configuration: initial,
            topics: topics,
            topicTable: topicTable,
            declinationDegrees: field?.declinationDegrees,
            headingUsability: field?.headingUsability
        )
        // The hub is made before the controller and reports faults to it through this box.
        let faults = FaultBox()
        hub = SensorHub(
            outbox: outbox,
            clock: WallClock(clock: clock, isSynchronized: options.clockSynchronized),
            faults: { faults.forward($0) },
            sparkplug: options.sparkplug
        )
        controller = AgentController(
            configuration: configuration,
            source: source,
            hub: hub,
            topics: topics,
            topicTable: topicTable,
            streamFactory: { [catalog] in catalog.make($0, $1) },
            locationConfigured: field != nil,
            headingUnusable: field?.headingUsability == .unusable,
            clockSynchronized: options.clockSynchronized,
            clock: clock,
            prepare: options.prepare,
            referenceAttitudeStore: options.referenceAttitudeStore,
            pendingFallKeeper: options.pendingFallKeeper,
            logger: logger
        )
        // Weak: the controller owns the hub, which owns this box; a strong capture kept the whole graph alive
        // after the agent ended (each simulated process leaked its pipeline).
        faults.target = { [weak controller, report = options.faults] fault in
            controller?.recordFault(fault)
            report(fault)
        }
    }

    /// The geomagnetic field at `location` today, or nil (after saying why) when the model cannot answer.
    private static func geomagneticField(
        _ location: LocationSettings,
        now: Double,
        logger: Logger
    ) -> WorldMagneticModel.GeomagneticField? {
        let found: WorldMagneticModel.GeomagneticField?
        do {
            found = try StreamCatalog.field(for: location, on: now)
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

/// Lets the hub, built before the controller, forward faults to it.
private final class FaultBox: @unchecked Sendable {
    // Set once in Pipeline.init, before any sample flows; read-only afterwards.
    var target: (@Sendable (SourceFault) -> Void)?
    func forward(_ fault: SourceFault) { target?(fault) }
}
