import MotionModel

/// Orientation-independent step detection on the magnitude of the acceleration.
///
/// 1. `|a|` in g (the sign convention does not matter for a magnitude) is low-passed (Butterworth,
///    `lowPassCutoff`) and a slow baseline (gravity, ≈ 1 g) is subtracted.
/// 2. A step candidate is an upward crossing of an adaptive threshold, `thresholdFactor` × the signal's
///    recent RMS but at least `minimumThreshold`, after the signal went below −`rearmFraction` × threshold
///    (hysteresis: one crossing per bounce) and at least the minimum interval after the previous candidate.
///    While walking, that interval grows to `adaptiveIntervalFraction` × the current step period, which
///    rejects the second bump (heel strike, push-off) of a slow step.
/// 3. A regularity gate confirms walking only after `confirmationSteps` candidates with intervals between
///    the minimum and `maximumStepInterval` whose longest/shortest ratio is at most `maximumIntervalRatio`,
///    while a fair share of the dynamic acceleration lies along gravity (`minimumVerticalFraction`: the
///    body's bounce; waving a phone moves it mostly sideways). Then it back-counts those steps; later
///    candidates count at once until no step comes for `stopTimeout`.
///
/// This is the windowed-peak scheme of Brajdic & Harle (UbiComp 2013) and Salvi et al. (EMBC 2018) made
/// causal, with the regularity gate of commercial pedometers (a few steps before the first count).
public struct StepDetector: Sendable {
    /// Detector settings; every number carries its unit. The defaults were chosen on half of the Oxford
    /// step-counter walks and checked on the other half (BENCHMARKS.md, `motion-bench steps`).
    public struct Settings: Sendable, Equatable {
        /// Low-pass cut-off on the acceleration magnitude, Hz. Walking and running cadences are 1–3.5 Hz.
        public var lowPassCutoff: Double
        /// Time constant of the baseline (gravity) removed from the magnitude, s.
        public var baselineTimeConstant: Double
        /// Time constant of the RMS that scales the threshold, s.
        public var thresholdTimeConstant: Double
        /// Threshold as a multiple of the recent RMS of the filtered signal.
        public var thresholdFactor: Double
        /// Smallest threshold, g: below it nothing is a step (sensor noise, a phone on a table).
        public var minimumThreshold: Double
        /// How far below zero, as a fraction of the threshold, the signal must go before the next step.
        public var rearmFraction: Double
        /// Shortest time between two steps, s (3.5 steps/s is a sprint; 4 steps/s is the fastest human cadence).
        public var minimumStepInterval: Double
        /// While walking, the shortest interval becomes this fraction of the current step period.
        public var adaptiveIntervalFraction: Double
        /// Longest time between two steps of one walk, s.
        public var maximumStepInterval: Double
        /// Candidates needed, all regular, before walking is confirmed and they are counted.
        public var confirmationSteps: Int
        /// Largest ratio of the longest to the shortest interval among the confirming candidates.
        public var maximumIntervalRatio: Double
        /// Walking stops (a pause event) when no step comes for this long, s.
        public var stopTimeout: Double
        /// Smallest share of the dynamic acceleration's power along gravity needed to confirm walking.
        public var minimumVerticalFraction: Double
        /// Time constant of the gravity estimate and of the vertical-share averages, s.
        public var verticalTimeConstant: Double

        public init(
            lowPassCutoff: Double,
            baselineTimeConstant: Double,
            thresholdTimeConstant: Double,
            thresholdFactor: Double,
            minimumThreshold: Double,
            rearmFraction: Double,
            minimumStepInterval: Double,
            adaptiveIntervalFraction: Double,
            maximumStepInterval: Double,
            confirmationSteps: Int,
            maximumIntervalRatio: Double,
            stopTimeout: Double,
            minimumVerticalFraction: Double,
            verticalTimeConstant: Double
        ) {
            self.lowPassCutoff = lowPassCutoff
            self.baselineTimeConstant = baselineTimeConstant
            self.thresholdTimeConstant = thresholdTimeConstant
            self.thresholdFactor = thresholdFactor
            self.minimumThreshold = minimumThreshold
            self.rearmFraction = rearmFraction
            self.minimumStepInterval = minimumStepInterval
            self.adaptiveIntervalFraction = adaptiveIntervalFraction
            self.maximumStepInterval = maximumStepInterval
            self.confirmationSteps = confirmationSteps
            self.maximumIntervalRatio = maximumIntervalRatio
            self.stopTimeout = stopTimeout
            self.minimumVerticalFraction = minimumVerticalFraction
            self.verticalTimeConstant = verticalTimeConstant
        }

        /// The shipped parameter set (one set for every placement and walker).
        public static let defaults = Settings(
            lowPassCutoff: 2.5,
            baselineTimeConstant: 1.0,
            thresholdTimeConstant: 2.0,
            thresholdFactor: 0.4,
            minimumThreshold: 0.03,
            rearmFraction: 0.3,
            minimumStepInterval: 0.25,
            adaptiveIntervalFraction: 0.6,
            maximumStepInterval: 1.5,
            confirmationSteps: 5,
            maximumIntervalRatio: 1.8,
            stopTimeout: 2.0,
            minimumVerticalFraction: 0.15,
            verticalTimeConstant: 2.0
        )
    }

    /// What one sample changed.
    public struct Update: Sendable, Equatable {
        /// Steps counted by this sample: 0, 1, or `confirmationSteps` when a walk is confirmed.
        public var newSteps = 0
        /// Set when this sample confirmed a walk: the time of its first (back-counted) step, s.
        public var walkStarted: Double?
        /// Set when this sample ended a walk: the time of its last step, s.
        public var walkStopped: Double?
        /// The time of the most recent counted step, s, when `newSteps > 0`.
        public var lastStepTime: Double?

        public init() {}
    }

    public let settings: Settings
    /// Whether a walk is confirmed and not yet timed out.
    public private(set) var isWalking = false
    /// Steps counted since start.
    public private(set) var stepCount = 0
    /// The time of the last counted step, s (−∞ before the first).
    public private(set) var lastStepTime = -Double.infinity
    /// The smoothed interval between counted steps, s; 0 when not walking.
    public private(set) var stepPeriod = 0.0

    private var lowPass: LowPassBiquad
    private var lastTimestamp = -Double.infinity
    private var baseline = 1.0
    private var meanSquare: Double
    private var armed = false
    private var lastCandidateTime = -Double.infinity
    // Candidate times awaiting confirmation: fixed capacity, allocated once here.
    private var pending: ContiguousArray<Double>
    private var pendingCount = 0
    private var gravity = Vector3.zero
    private var verticalPower = 0.0
    private var horizontalPower = 0.0

    public init(settings: Settings = .defaults) {
        self.settings = settings
        lowPass = LowPassBiquad(cutoff: settings.lowPassCutoff)
        let startRMS = settings.minimumThreshold / max(settings.thresholdFactor, 1e-9)
        meanSquare = startRMS * startRMS
        pending = ContiguousArray(repeating: 0, count: max(settings.confirmationSteps, 1))
    }

    /// The share of the dynamic acceleration's power along gravity over the last few seconds (0…1).
    public var verticalFraction: Double {
        let total = verticalPower + horizontalPower
        return total > 0 ? verticalPower / total : 0
    }

    /// Feeds one accelerometer sample (g, either sign convention; time in s).
    public mutating func update(timestamp: Double, acceleration: Vector3) -> Update {
        var out = Update()
        let dt = timestamp - lastTimestamp
        let first = !lastTimestamp.isFinite
        guard acceleration.isFinite, first || (dt > 0 && dt < 0.5) else {
            // A gap or a timestamp going backwards: restart the filters, keep the count.
            if timestamp.isFinite, acceleration.isFinite { restartFilters(at: timestamp, acceleration) }
            return stopIfIdle(at: timestamp, into: out)
        }
        if first {
            restartFilters(at: timestamp, acceleration)
            return out
        }
        lastTimestamp = timestamp
        trackVertical(acceleration, dt: dt)

        let y = lowPass.update(acceleration.norm, dt: dt)
        baseline += dt / (settings.baselineTimeConstant + dt) * (y - baseline)
        let f = y - baseline
        meanSquare += dt / (settings.thresholdTimeConstant + dt) * (f * f - meanSquare)
        let threshold = max(settings.minimumThreshold, settings.thresholdFactor * meanSquare.squareRoot())
        if f < -settings.rearmFraction * threshold { armed = true }

        var minimumInterval = settings.minimumStepInterval
        if isWalking, stepPeriod > 0 {
            minimumInterval = max(minimumInterval, settings.adaptiveIntervalFraction * stepPeriod)
        }
        if armed, f > threshold, timestamp - lastCandidateTime >= minimumInterval {
            armed = false
            candidate(at: timestamp, into: &out)
        }
        return stopIfIdle(at: timestamp, into: out)
    }

    private mutating func restartFilters(at timestamp: Double, _ acceleration: Vector3) {
        lastTimestamp = timestamp
        lowPass = LowPassBiquad(cutoff: settings.lowPassCutoff)
        _ = lowPass.update(acceleration.norm, dt: 0.01)
        baseline = acceleration.norm
        gravity = acceleration
        armed = false
    }

    private mutating func trackVertical(_ a: Vector3, dt: Double) {
        let alpha = dt / (settings.verticalTimeConstant + dt)
        gravity += alpha * (a - gravity)
        let g = gravity.norm
        guard g > 0 else { return }
        let dynamic = a - gravity
        let vertical = dynamic.dot(gravity) / g
        let horizontal2 = max(dynamic.squaredNorm - vertical * vertical, 0)
        verticalPower += alpha * (vertical * vertical - verticalPower)
        horizontalPower += alpha * (horizontal2 - horizontalPower)
    }

    private mutating func candidate(at time: Double, into out: inout Update) {
        let interval = time - lastCandidateTime
        lastCandidateTime = time
        if isWalking {
            if interval < settings.maximumStepInterval {
                stepPeriod = stepPeriod > 0 ? stepPeriod + 0.2 * (interval - stepPeriod) : interval
            }
            count(1, lastAt: time, into: &out)
            return
        }
        if pendingCount > 0, time - pending[pendingCount - 1] > settings.maximumStepInterval { pendingCount = 0 }
        if pendingCount == pending.count {
            for i in 1..<pending.count { pending[i - 1] = pending[i] }
            pendingCount -= 1
        }
        pending[pendingCount] = time
        pendingCount += 1
        guard pendingCount == pending.count, isRegular(), verticalFraction >= settings.minimumVerticalFraction
        else { return }
        isWalking = true
        stepPeriod = pendingCount > 1 ? (time - pending[0]) / Double(pendingCount - 1) : 0
        out.walkStarted = pending[0]
        pendingCount = 0
        count(pending.count, lastAt: time, into: &out)
    }

    private func isRegular() -> Bool {
        guard pendingCount > 1 else { return true }
        var shortest = Double.infinity
        var longest = 0.0
        for i in 1..<pendingCount {
            let d = pending[i] - pending[i - 1]
            shortest = min(shortest, d)
            longest = max(longest, d)
        }
        return longest <= settings.maximumStepInterval && longest <= settings.maximumIntervalRatio * shortest
    }

    private mutating func count(_ n: Int, lastAt time: Double, into out: inout Update) {
        stepCount += n
        lastStepTime = time
        out.newSteps += n
        out.lastStepTime = time
    }

    private mutating func stopIfIdle(at timestamp: Double, into out: Update) -> Update {
        guard isWalking, timestamp - lastStepTime > settings.stopTimeout else { return out }
        var out = out
        isWalking = false
        stepPeriod = 0
        pendingCount = 0
        out.walkStopped = lastStepTime
        return out
    }
}
