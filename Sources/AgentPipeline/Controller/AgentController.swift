import AgentConfig
import AgentPorts
import Foundation
import Logging
import MotionEstimation
import MotionModel
import MotionWire
import Synchronization

/// Applies a configuration to the pipeline: at start, and for every change the configuration's layers make
/// (commands, desired documents, reloads — all through the control door and its reconciler). Each change
/// re-plans the hardware (lowest sufficient rate, sensors off when unneeded), reconfigures the streams in the hub
/// between two samples, and yields the status to publish. Changes are serialized whole (plan, apply), so the plan
/// applied last is always the one made from the newest settings.
///
/// The configuration in force is not kept here: `configuration` reads it where it lives (the reconciler's
/// effective configuration in the agent; a fixed one in `process` and the bench). A change is applied as a
/// candidate against it, and the reconciler commits the candidate only once the controller has applied it.
/// The controller keeps only what it derives: the rate plan, the devices' faults, the reference attitude's
/// capture time.
package final class AgentController: Sendable {
    private struct State {
        /// Device motion's reference attitude and when it was set (`streams.device-motion.reference_attitude`).
        var referenceAttitude: ReferenceAttitude?
        var planned: RatePlanner.Result
        var deviceErrors: [String: String] = [:]
    }

    private let source: SensorSource
    private let hub: SensorHub
    private let topics: TopicScheme
    private let topicTable: TopicTable
    private let logger: Logger
    private let state: Mutex<State>
    /// Held for a whole change; `state` alone is held only briefly, since applying a plan reaches the hardware
    /// and a source may report a fault (`recordFault`) while it does.
    private let changes = Mutex(())
    private let deviceID: String
    /// The configuration in force.
    private let configuration: @Sendable () -> AgentConfiguration
    /// Builds the stream object for each name (raw streams, estimators).
    private let streamFactory: @Sendable (StreamName, StreamSettings) -> any MotionStream
    /// Whether the magnetic declination is known (xTrueNorthZVertical).
    private let locationConfigured: Bool
    /// The World Magnetic Model's horizontal field at the location is too weak for a compass.
    private let headingUnusable: Bool
    /// The host's clock synchronization, for the status document.
    private let clockSynchronized: @Sendable () -> Bool
    /// Where the reference attitude's capture time is kept; nil: not kept (`control.persist: false`).
    private let referenceAttitudeStore: ReferenceAttitudeStore?
    /// Where the fall awaiting a resolution is kept across restarts; nil: not kept.
    private let pendingFallKeeper: PendingFallKeeper?
    /// The agent's time source: when a reference attitude was set, the time of a status.
    private let clock: any AgentClock
    /// Opens what a configuration needs before it runs (the durable log); see `Pipeline.Options.prepare`.
    private let prepare: @Sendable (AgentConfiguration) -> Void

    package init(
        configuration: @escaping @Sendable () -> AgentConfiguration,
        source: SensorSource,
        hub: SensorHub,
        topics: TopicScheme,
        topicTable: TopicTable,
        streamFactory: @escaping @Sendable (StreamName, StreamSettings) -> any MotionStream,
        locationConfigured: Bool = false,
        headingUnusable: Bool = false,
        clockSynchronized: @escaping @Sendable () -> Bool = { true },
        clock: any AgentClock = SystemClock(),
        prepare: @escaping @Sendable (AgentConfiguration) -> Void = { _ in },
        referenceAttitudeStore: ReferenceAttitudeStore? = nil,
        pendingFallKeeper: PendingFallKeeper? = nil,
        logger: Logger
    ) {
        self.configuration = configuration
        self.clock = clock
        self.prepare = prepare
        self.clockSynchronized = clockSynchronized
        self.referenceAttitudeStore = referenceAttitudeStore
        self.pendingFallKeeper = pendingFallKeeper
        self.locationConfigured = locationConfigured
        self.headingUnusable = headingUnusable
        self.streamFactory = streamFactory
        self.source = source
        self.hub = hub
        self.topics = topics
        self.topicTable = topicTable
        self.logger = logger
        let initial = configuration()
        deviceID = initial.device.id
        state = Mutex(
            State(
                referenceAttitude: Self.reference(
                    initial.deviceMotion.referenceAttitude,
                    store: referenceAttitudeStore,
                    now: clock.realtimeSeconds()
                ),
                planned: RatePlanner.Result(plan: AcquisitionPlan(), sensorRatesHz: [:], sensorDevices: [:])
            )
        )
    }

    /// Builds the streams from the configuration in force and starts the hardware accordingly.
    package func start() throws {
        try changes.withLock { _ in
            let configuration = configuration()
            prepare(configuration)
            let streams = StreamName.allCases.map { streamFactory($0, configuration[stream: $0]) }
            let reference = state.withLock { $0.referenceAttitude }
            for case let motion as DeviceMotionStream in streams {
                motion.referenceFrame = configuration.deviceMotion.referenceFrame
                motion.referenceAttitude = reference
            }
            let inheritedFall = pendingFallKeeper?.load()
            if let inheritedFall {
                logger.notice(
                    "a fall reported before this start awaits its resolution: watched for the rest of its response window",
                    metadata: ["fall.date": "\(inheritedFall.date)"]
                )
            }
            for case let events as EventsStream in streams {
                events.reconfigure(detector: EventsStream.detectorSettings(configuration.events))
                events.keepPendingFall(in: pendingFallKeeper, inherited: inheritedFall)
            }
            hub.setStreams(streams)
            try replan(configuration)
        }
    }

    /// Applies `candidate` in place of the configuration in force, changing only what differs from it: the
    /// streams' settings, device motion's reference frame and attitude, the events detector's settings. Returns the names of the streams that
    /// changed; nothing a plan depends on changed, the sensors and streams keep running untouched. When the
    /// hardware refuses the new plan, the configuration in force is planned again and the refusal thrown, so the
    /// pipeline runs what the reconciler still holds.
    package func apply(_ candidate: AgentConfiguration) throws -> [String] {
        try changes.withLock { _ in
            let current = configuration()
            do {
                return try apply(candidate, replacing: current)
            } catch {
                _ = try? apply(current, replacing: candidate)
                throw error
            }
        }
    }

    /// Only with `changes` held.
    private func apply(_ candidate: AgentConfiguration, replacing current: AgentConfiguration) throws -> [String] {
        // Before the streams change: a stream made durable finds the durable log open.
        prepare(candidate)
        var changed = StreamName.allCases.filter { candidate[stream: $0] != current[stream: $0] }.map(\.rawValue)
        let motion = StreamName.deviceMotion.rawValue
        if setReferenceAttitudeLocked(candidate.deviceMotion.referenceAttitude), !changed.contains(motion) {
            changed.append(motion)
        }
        let frame = candidate.deviceMotion.referenceFrame
        if frame != current.deviceMotion.referenceFrame {
            try checkFrame(frame)
            hub.withStreams { streams in
                for case let stream as DeviceMotionStream in streams { stream.referenceFrame = frame }
            }
            if !changed.contains(motion) { changed.append(motion) }
        }
        if candidate.events != current.events {
            let detector = EventsStream.detectorSettings(candidate.events)
            hub.withStreams { streams in
                for case let stream as EventsStream in streams { stream.reconfigure(detector: detector) }
            }
            if !changed.contains(StreamName.events.rawValue) { changed.append(StreamName.events.rawValue) }
        }
        if !changed.isEmpty { try replan(candidate) }
        return changed
    }

    /// Makes `quaternion` device motion's reference attitude (nil: none) when it differs from the one in force,
    /// set now; returns whether it changed. Only with `changes` held.
    private func setReferenceAttitudeLocked(_ quaternion: Quaternion?) -> Bool {
        let current = state.withLock { $0.referenceAttitude }
        switch (current, quaternion) {
        case (nil, nil): return false
        case (let c?, let q?) where c.quaternion.isSame(as: q): return false
        default: break
        }
        let reference = Self.reference(quaternion, store: referenceAttitudeStore, now: clock.realtimeSeconds())
        state.withLock { $0.referenceAttitude = reference }
        hub.withStreams { streams in
            for case let motion as DeviceMotionStream in streams { motion.referenceAttitude = reference }
        }
        if let reference {
            logger.notice(
                "reference attitude set: \(DeviceMotionSettings.referenceAttitudeText(reference.quaternion)); device motion now also publishes relativeAttitude"
            )
        } else {
            logger.notice("reference attitude cleared: device motion publishes the absolute attitude only")
        }
        return true
    }

    /// The reference for `quaternion`, with the capture time the store kept when it is the same rotation.
    private static func reference(
        _ quaternion: Quaternion?,
        store: ReferenceAttitudeStore?,
        now: Double
    )
        -> ReferenceAttitude?
    {
        if let store { return store.reconcile(quaternion, now: now) }
        return quaternion.map { ReferenceAttitude(quaternion: $0, time: now) }
    }

    /// Device motion's latest attitude, to capture as the reference (`set-reference-attitude` without a
    /// quaternion). Refused while device motion is not running: there is no attitude to capture.
    package func currentAttitude() throws -> Quaternion {
        guard let attitude = withDeviceMotion({ $0.latestAttitude }) ?? nil else {
            throw ControlFailure(
                .conflict,
                "there is no current attitude to capture: device motion is not running (stopped, a sensor missing, or no sample yet) — start it (start stream=device-motion) and retry, or give the reference as w, x, y and z"
            )
        }
        return attitude
    }

    /// The reference attitude in force, if any.
    package var referenceAttitude: ReferenceAttitude? { state.withLock { $0.referenceAttitude } }

    /// Refuses a reference frame the hardware or the configuration cannot serve.
    private func checkFrame(_ frame: AttitudeReferenceFrame) throws {
        let present = Set(source.devices.flatMap(\.sensors))
        if let reason = AgentStatus.Availability.unavailableReason(
            frame,
            sensors: present,
            locationConfigured: locationConfigured
        ) {
            throw ControlFailure(.conflict, reason)
        }
        if frame.isNorthReferenced && headingUnusable {
            throw ControlFailure(
                .conflict,
                "the horizontal geomagnetic field at the configured location is below 2000 nT: no compass heading is possible there — use xArbitraryCorrectedZVertical"
            )
        }
    }

    /// One stream's status as the status document shows it (effective, clamped rate included).
    package func streamStatus(_ name: StreamName) -> AgentStatus.Stream {
        status(state: .online, reason: nil, bootCount: 0).streams![name.rawValue]!
    }

    /// Whether the current plan has some sensor switched on (samples are expected to flow).
    package var anySensorOn: Bool {
        state.withLock { s in s.planned.plan.devices.values.contains { !$0.isOff } }
    }

    /// Publishes partial batches (at shutdown).
    package func flushBatches() {
        hub.flushThenReconfigure { _ in }
    }

    /// Starts the step count over (Core Motion has no reset; operators of a fleet asked for one).
    package func resetPedometer() throws {
        let found = hub.withStreams { streams in
            for case let pedometer as PedometerStream in streams {
                pedometer.reset()
                return true
            }
            return false
        }
        if !found { throw ControlFailure(.conflict, "the pedometer stream does not exist in this agent") }
    }

    /// An operator's resolution of the fall awaiting one (`confirm-fall`, `dismiss-fall`): the events stream
    /// publishes the follow-up at once; it is returned as published. Refused (409, naming what to do) when the
    /// events stream is not running or no fall awaits a resolution.
    /// With `date` (Unix seconds, as the first report carried it), only that fall: an operator who saw one fall
    /// does not resolve a newer one by mistake.
    package func resolveFall(
        _ resolution: FallDetectionEvent.Resolution,
        date: Double? = nil
    ) throws -> FallDetectionEvent {
        let outcome: Result<FallDetectionEvent, ControlFailure> = hub.withStreamsPublishing { streams, context in
            for case let events as EventsStream in streams {
                guard events.isRunning else {
                    return .failure(
                        ControlFailure(
                            .conflict,
                            "the events stream is not running, so no fall is being watched — start it (start stream=events); a fall it detects can then be resolved"
                        )
                    )
                }
                if let date, let pending = events.pendingFallDate, abs(pending - date) > 0.0005 {
                    // As the events topic writes it: 3 decimals.
                    let shown = String(format: "%.3f", pending)
                    return .failure(
                        ControlFailure(
                            .conflict,
                            "the fall awaiting a resolution is the one of date \(shown), not \(date) (that one was resolved already, or never reported) — resolve it with date=\(shown) after checking it, or send the command without date"
                        )
                    )
                }
                if let event = events.resolveFall(resolution, context: &context) { return .success(event) }
                return .failure(
                    ControlFailure(
                        .conflict,
                        "no fall awaits a resolution: none was detected since the events stream started (or was kept from before a restart), or the last one was already resolved (rejected, unresponsive or by an operator — its follow-up on the events topic says which); nothing to resolve"
                    )
                )
            }
            return .failure(ControlFailure(.conflict, "the events stream does not exist in this agent"))
        }
        return try outcome.get()
    }

    /// Runs `body` on the device-motion stream under the hub's lock (state snapshots, restores).
    package func withDeviceMotion<R: Sendable>(_ body: (DeviceMotionStream) -> R) -> R? {
        withStream(DeviceMotionStream.self, body)
    }

    /// Runs `body` on the stream of type `T` under the hub's lock, between two samples.
    package func withStream<T: MotionStream, R: Sendable>(_ type: T.Type, _ body: (T) -> R) -> R? {
        hub.withStreams { streams in
            for case let stream as T in streams { return body(stream) }
            return nil
        }
    }

    package func recordFault(_ fault: SourceFault) {
        state.withLock { s in
            s.deviceErrors[fault.deviceID] = fault.recovered ? nil : fault.message
        }
    }

    /// Plans the hardware for `configuration`'s streams and applies the plan. Only with `changes` held.
    private func replan(_ configuration: AgentConfiguration) throws {
        let devices = source.devices
        var demands: [SensorType: Double] = [:]
        let perStream = hub.withStreams { streams in
            streams.map { $0.sensorDemandsHz(settings: configuration[stream: $0.name]) }
        }
        for streamDemands in perStream {
            for (sensor, rate) in streamDemands { demands[sensor] = max(demands[sensor] ?? 0, rate) }
        }
        let result = RatePlanner.plan(devices: devices, demandsHz: demands)
        state.withLock { $0.planned = result }
        try source.apply(result.plan)
        let topicIDs = Dictionary(
            uniqueKeysWithValues: StreamName.allCases.map { ($0, topicTable.id(for: topics.stream($0))) }
        )
        // A stream's derived topics (pedometer events, absolute altitude) share its expiry.
        for topic in StreamDescriptor.allTopics {
            topicTable.setExpiry(
                configuration[stream: topic.stream].expirySeconds,
                forTopic: topics.topic(topic.payload)
            )
        }
        hub.flushThenReconfigure { streams in
            for stream in streams {
                stream.configure(
                    settings: configuration[stream: stream.name],
                    sensorRatesHz: result.sensorRatesHz,
                    topicID: topicIDs[stream.name]!
                )
            }
        }
        for (id, plan) in result.plan.devices.sorted(by: { $0.key < $1.key }) {
            logger.info(
                "sensor device \(plan.isOff ? "off" : "on at \(plan.rateHz) Hz")",
                metadata: ["iio.device": "\(id)", "agent.sensors": "\(plan.sensors.map(\.rawValue).sorted())"]
            )
        }
    }

    /// `streams.<stream>.rate_hz` → what the hardware made of a request it does not offer exactly
    /// (`OfferedRateNotes`), for the configuration's account in the status.
    package func offeredRateNotes() -> [String: String] {
        let devices = source.devices
        let settings = configuration().streams
        let planned = state.withLock { $0.planned }
        let effective = hub.withStreams { streams in
            Dictionary(uniqueKeysWithValues: streams.map { ($0.name, $0.effectiveRateHz) })
        }
        return OfferedRateNotes.notes(
            settings: settings,
            effectiveRatesHz: effective,
            planned: planned,
            devices: devices
        )
    }

    /// The full status document as of now.
    package func status(state agentState: AgentStatus.State, reason: String?, bootCount: UInt64) -> AgentStatus {
        let devices = source.devices
        let configuration = configuration()
        let frame = configuration.deviceMotion.referenceFrame
        let (planned, deviceErrors, reference) = state.withLock {
            ($0.planned, $0.deviceErrors, $0.referenceAttitude)
        }
        // A device that failed (unplugged, driver error) takes its sensors away until it delivers again, so the
        // streams that need them say they are unavailable, and why, instead of silently publishing nothing.
        let failing = devices.filter { deviceErrors[$0.id] != nil }
        let present = Set(devices.filter { deviceErrors[$0.id] == nil }.flatMap(\.sensors))
        let effective = hub.withStreams { streams in
            Dictionary(uniqueKeysWithValues: streams.map { ($0.name, ($0.effectiveRateHz, $0.requiredSensors)) })
        }
        var streams: [String: AgentStatus.Stream] = [:]
        for name in StreamName.allCases {
            let s = configuration[stream: name]
            let (rate, needs) = effective[name] ?? (0, [])
            let missingSensors = needs.subtracting(present)
            let missing = missingSensors.map(\.rawValue).sorted()
            let down = failing.filter { !Set($0.sensors).isDisjoint(with: missingSensors) }
            var error: String?
            if s.enabled && !down.isEmpty {
                error =
                    "unavailable while \(down.compactMap { deviceErrors[$0.id] }.joined(separator: "; ")): "
                    + "the stream resumes by itself when the device delivers again"
            } else if s.enabled && !missing.isEmpty {
                error = "no \(missing.joined(separator: ", ")) found: this stream cannot deliver on this hardware"
            }
            streams[name.rawValue] = AgentStatus.Stream(
                enabled: s.enabled,
                requestedRateHz: s.rateHz,
                rateHz: rate,
                qos: s.qos,
                retain: s.retain,
                available: missing.isEmpty,
                error: error,
                referenceFrame: name == .deviceMotion ? frame.rawValue : nil,
                batch: s.batch,
                encoding: s.encoding.rawValue,
                referenceAttitude: name == .deviceMotion ? reference.map(AgentStatus.ReferenceAttitude.init) : nil
            )
        }
        return AgentStatus(
            state: agentState,
            device: deviceID,
            agentVersion: AgentVersion.version,
            schemaVersion: AgentVersion.schemaVersion,
            bootCount: bootCount,
            time: clock.realtimeSeconds(),
            clockSynchronized: clockSynchronized(),
            reason: reason,
            source: source.summary,
            streams: streams,
            devices: devices.map { d in
                let plan = planned.plan.devices[d.id] ?? .off
                return AgentStatus.Device(
                    id: d.id,
                    name: d.name,
                    sensors: d.sensors.map(\.rawValue).sorted(),
                    activeSensors: plan.sensors.map(\.rawValue).sorted(),
                    rateHz: plan.isOff ? 0 : plan.rateHz,
                    supportedRatesHz: d.supportedRates.sysfsText,
                    error: deviceErrors[d.id]
                )
            },
            sensors: AgentStatus.Availability(sensors: present, locationConfigured: locationConfigured)
        )
    }
}

extension SupportedRates {
    /// As sysfs writes it: a list of rates, or `[min step max]`.
    package var sysfsText: String {
        switch self {
        case .list(let rates): rates.sorted().map { formatHz($0) }.joined(separator: " ")
        case .range(let min, let step, let max): "[\(formatHz(min)) \(formatHz(step)) \(formatHz(max))]"
        }
    }
}

private func formatHz(_ v: Double) -> String {
    Int(exactly: v).map(String.init) ?? String(v)
}
