import MotionModel

/// Core Motion's pedometer: steps, distance, cadence, pace, pause/resume events and floors, from
/// accelerometer samples (and barometer samples, for floors), one sample per `update`.
///
/// Everything is cumulative since the first sample, which is what the agent snapshots for its history:
/// the steps between two snapshots are the difference of their `numberOfSteps`.
package struct Pedometer: Sendable {
    package struct Settings: Sendable, Equatable {
        package var stepDetector: StepDetector.Settings
        /// The user's height, m; step length scales with it.
        package var userHeight: Double
        /// Step length per unit of height at zero cadence (the intercept of the linear model), m/m.
        package var stepLengthIntercept: Double
        /// How step length per unit of height grows with cadence, (m/m) per (steps/s).
        package var stepLengthSlope: Double
        /// Bounds on step length per unit of height, m/m (a shuffle to a sprint).
        package var stepLengthRange: ClosedRange<Double>
        package var floors: FloorCounter.Settings

        package init(
            stepDetector: StepDetector.Settings,
            userHeight: Double,
            stepLengthIntercept: Double,
            stepLengthSlope: Double,
            stepLengthRange: ClosedRange<Double>,
            floors: FloorCounter.Settings
        ) {
            self.stepDetector = stepDetector
            self.userHeight = userHeight
            self.stepLengthIntercept = stepLengthIntercept
            self.stepLengthSlope = stepLengthSlope
            self.stepLengthRange = stepLengthRange
            self.floors = floors
        }

        /// Step length = height × (0.09 + 0.17 × cadence): 0.40 × height at 1.85 steps/s, the usual walking
        /// rule of thumb (step ≈ 0.41–0.42 × height), growing linearly with step frequency as in the
        /// frequency-based models of Weinberg (2002) and Renaudin et al. (2012); 0.60 × height at 3 steps/s.
        package static let defaults = Settings(
            stepDetector: .defaults,
            userHeight: 1.70,
            stepLengthIntercept: 0.09,
            stepLengthSlope: 0.17,
            stepLengthRange: 0.20...0.90,
            floors: .defaults
        )
    }

    package let settings: Settings
    /// The detector `update(_:)` runs; `update(_:gait:)` takes a shared detector's reading instead and
    /// leaves this one idle.
    package private(set) var detector: StepDetector
    /// Steps counted since start.
    package private(set) var numberOfSteps = 0
    /// The latest gait reading (walking, step period, last step).
    package private(set) var gait = StepDetector.Reading()
    package private(set) var floorCounter: FloorCounter
    /// The first sample's time, s.
    package private(set) var startDate: Double?
    /// The latest sample's time, s.
    package private(set) var endDate: Double?
    /// Distance since start, m.
    package private(set) var distance = 0.0
    /// Time spent walking or running since start, s (between the first and last step of each walk).
    package private(set) var activeTime = 0.0
    private var hasBarometer = false

    package init(settings: Settings = .defaults) {
        self.settings = settings
        detector = StepDetector(settings: settings.stepDetector)
        floorCounter = FloorCounter(settings: settings.floors)
    }

    package var isWalking: Bool { gait.isWalking }

    /// Steps per second over the last few steps; nil when not walking.
    package var currentCadence: Double? { gait.cadence }

    /// Seconds per metre over the last few steps; nil when not walking.
    package var currentPace: Double? {
        guard let cadence = currentCadence else { return nil }
        return 1 / (cadence * stepLength(cadence: cadence))
    }

    /// Seconds per metre over all the time spent walking; nil before the first walk.
    package var averageActivePace: Double? {
        distance > 0 && activeTime > 0 ? activeTime / distance : nil
    }

    /// Step length at a cadence, m.
    package func stepLength(cadence: Double) -> Double {
        let perHeight = settings.stepLengthIntercept + settings.stepLengthSlope * cadence
        let bounded = min(max(perHeight, settings.stepLengthRange.lowerBound), settings.stepLengthRange.upperBound)
        return settings.userHeight * bounded
    }

    /// Everything since the first sample, as Core Motion reports it.
    package var data: PedometerData {
        PedometerData(
            startDate: startDate ?? 0,
            endDate: endDate ?? 0,
            numberOfSteps: numberOfSteps,
            distance: distance,
            floorsAscended: hasBarometer ? floorCounter.floorsAscended : nil,
            floorsDescended: hasBarometer ? floorCounter.floorsDescended : nil,
            currentPace: currentPace,
            currentCadence: currentCadence,
            averageActivePace: averageActivePace
        )
    }

    /// Feeds one sample through this pedometer's own detector; returns a pause or resume event when
    /// walking stops or starts.
    @discardableResult
    package mutating func update(_ sample: IMUSample) -> PedometerEvent? {
        var reading: StepDetector.Reading?
        if let a = sample.acceleration { reading = detector.read(timestamp: sample.timestamp, acceleration: a) }
        return update(sample, gait: reading)
    }

    /// Feeds one sample with the reading a shared detector made of it (nil: no acceleration in it).
    @discardableResult
    package mutating func update(_ sample: IMUSample, gait reading: StepDetector.Reading?) -> PedometerEvent? {
        if startDate == nil { startDate = sample.timestamp }
        endDate = sample.timestamp
        var event: PedometerEvent?
        if let r = reading {
            let previousStep = gait.lastStepTime
            gait = r
            let u = r.update
            numberOfSteps += u.newSteps
            if u.newSteps > 0, r.stepPeriod > 0 {
                let cadence = 1 / r.stepPeriod
                distance += Double(u.newSteps) * stepLength(cadence: cadence)
                if let start = u.walkStarted {
                    activeTime += sample.timestamp - start
                } else if previousStep.isFinite {
                    activeTime += u.lastStepTime.map { $0 - previousStep } ?? 0
                }
            }
            if let start = u.walkStarted {
                event = PedometerEvent(date: start, type: .resume)
                floorCounter.walkStarted(at: start)
            }
            if let stop = u.walkStopped { event = PedometerEvent(date: stop, type: .pause) }
        }
        if let p = sample.pressureKPa {
            hasBarometer = true
            let stepping =
                gait.isWalking && sample.timestamp - gait.lastStepTime <= settings.floors.stepAttributionWindow
            floorCounter.update(timestamp: sample.timestamp, pressureKPa: p, stepping: stepping)
        }
        return event
    }
}
