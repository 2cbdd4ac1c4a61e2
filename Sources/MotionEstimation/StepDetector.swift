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
/// 3. A regularity gate confirms walking after `confirmationSteps` candidates whose intervals (or, for
///    double-peaked steps that alternate a short and a long interval, whose pairs of intervals) are steady —
///    longest/shortest at most `maximumIntervalRatio`, none above `maximumStepInterval` — while a fair share
///    of the dynamic acceleration lies along gravity (`minimumVerticalFraction`: the body's bounce; waving a
///    phone moves it mostly sideways) and while the signal repeats itself from one step or stride to the
///    next (`minimumStrideRegularity`: the larger normalised autocorrelation at a lag of one and of two
///    steps, after Moe-Nilssen & Helbostad 2004; a vehicle's random suspension motion decorrelates within a
///    period). Intervals of about two periods among intervals of one (`missedStepRatio`) are a steady rate
///    with single crossings missing (the other leg's softer strike); intervals alternating short and long,
///    each pair a steady stride longer than the slowest step, are steps of two lengths (`isUneven`: a pocket
///    feels the two legs' strikes at different points of their steps). Then it counts the steps made so far:
///    the window's, and before it the earlier crossings that keep the walk's rhythm and came while the
///    motion was gait-like (`backCount`) — so the count a subscriber sees lags a walk's first seconds and
///    then catches up, as Core Motion's does. Later candidates count at once, while both checks still
///    hold, until no step comes for `stopTimeout`. A gap of about two step periods (`missedStepRatio`)
///    inside a walk counts two steps: one footfall was too soft to cross the threshold.
/// 4. The step period is chosen by the stride, not by the candidates alone (`GaitPeriodicity`): a step with
///    two bumps (heel strike and push-off) gives two candidates per step. A signal that does not repeat
///    after one candidate interval but does after two is read as steps of twice that interval; when it
///    repeats after both, the horizontal acceleration (thigh tilt, body sway: once per stride) decides. The
///    choice is re-made at every counted step (`relock`), so a walk confirmed on the harmonic does not stay
///    there. Round one had no such choice and counted a double-peaked walk at twice its cadence ("running").
///    The other way round, crossings slower than the slowest step (`longestStepPeriod`) are strides: in a
///    trouser pocket |a| is dominated by that thigh's swing and its own leg's strike, the other leg's strike
///    may stay under the threshold, and a crossing every 0.9–1.3 s is one stride of two steps. Before issue
///    31 such a walk was followed at one "step" per stride: half its steps.
/// 5. The autocorrelation history is interpolated onto an exact 50 Hz grid. Round one kept the first sample
///    after each tick, so a sensor at 40 Hz, or a jittery 50 Hz, filled it at the wrong rate, every lag was
///    read wrong, the stride test failed and the walk was never confirmed.
///
/// `minimumThreshold` (0.06 g) is above a car's ride vibration on a rough road (≈ 0.8 m/s² rms, ISO 2631-1
/// "fairly uncomfortable") and below the bounce of the slowest walk in the Oxford set (peaks 0.1–0.15 g).
///
/// This is the windowed-peak scheme of Brajdic & Harle (UbiComp 2013) and Salvi et al. (EMBC 2018) made
/// causal, with the regularity gate of commercial pedometers (a few steps before the first count).
package struct StepDetector: Sendable {
    /// Detector settings; every number carries its unit. The defaults were chosen on half of the Oxford
    /// step-counter walks and checked on the other half (`scripts/research/steps_benchmark.py`, `motion-bench steps`).
    package struct Settings: Sendable, Equatable {
        /// Low-pass cut-off on the acceleration magnitude, Hz. Walking and running cadences are 1–3.5 Hz.
        package var lowPassCutoff: Double
        /// Time constant of the baseline (gravity) removed from the magnitude, s.
        package var baselineTimeConstant: Double
        /// Time constant of the RMS that scales the threshold, s.
        package var thresholdTimeConstant: Double
        /// Threshold as a multiple of the recent RMS of the filtered signal.
        package var thresholdFactor: Double
        /// Smallest threshold, g: below it nothing is a step (sensor noise, a phone on a table).
        package var minimumThreshold: Double
        /// How far below zero, as a fraction of the threshold, the signal must go before the next step.
        package var rearmFraction: Double
        /// Shortest time between two steps, s (3.5 steps/s is a sprint; 4 steps/s is the fastest human cadence).
        package var minimumStepInterval: Double
        /// While walking, the shortest interval becomes this fraction of the current step period.
        package var adaptiveIntervalFraction: Double
        /// Longest time between two steps of one walk, s.
        package var maximumStepInterval: Double
        /// Candidates needed, all regular, before walking is confirmed and they are counted.
        package var confirmationSteps: Int
        /// Largest ratio of the longest to the shortest interval among the confirming candidates.
        package var maximumIntervalRatio: Double
        /// Walking stops (a pause event) when no step comes for this long, s.
        package var stopTimeout: Double
        /// Smallest share of the dynamic acceleration's power along gravity needed to confirm walking.
        package var minimumVerticalFraction: Double
        /// Time constant of the gravity estimate and of the vertical-share averages, s.
        package var verticalTimeConstant: Double
        /// Smallest normalised autocorrelation of the filtered magnitude at a lag of one step or one stride.
        package var minimumStrideRegularity: Double
        /// Length of signal the stride autocorrelation looks at, s.
        package var regularityWindow: Double
        /// While walking, an interval this many step periods long counts as that many steps, rounded
        /// (footfalls too soft to cross the threshold).
        package var missedStepRatio: ClosedRange<Double>
        /// The slowest step, s: crossings are read as half steps (double peaks) only when twice their
        /// period is at most this (1.15 steps/s, below the slowest walk considered).
        package var longestStepPeriod: Double
        /// Below this autocorrelation after one crossing period, the signal does not repeat every crossing,
        /// so a crossing is not a step (`GaitPeriodicity.stepPeriod`).
        package var harmonicCorrelation: Double

        package init(
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
            verticalTimeConstant: Double,
            minimumStrideRegularity: Double,
            regularityWindow: Double,
            missedStepRatio: ClosedRange<Double>,
            longestStepPeriod: Double = 0.87,
            harmonicCorrelation: Double = 0.0
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
            self.minimumStrideRegularity = minimumStrideRegularity
            self.regularityWindow = regularityWindow
            self.missedStepRatio = missedStepRatio
            self.longestStepPeriod = longestStepPeriod
            self.harmonicCorrelation = harmonicCorrelation
        }

        /// The shipped parameter set (one set for every placement and walker).
        package static let defaults = Settings(
            lowPassCutoff: 3.0,
            baselineTimeConstant: 1.0,
            thresholdTimeConstant: 2.0,
            thresholdFactor: 0.4,
            minimumThreshold: 0.06,
            rearmFraction: 0.3,
            minimumStepInterval: 0.25,
            adaptiveIntervalFraction: 0.7,
            maximumStepInterval: 1.5,
            confirmationSteps: 5,
            maximumIntervalRatio: 1.8,
            stopTimeout: 2.0,
            minimumVerticalFraction: 0.2,
            verticalTimeConstant: 2.0,
            minimumStrideRegularity: 0.3,
            regularityWindow: 4.0,
            missedStepRatio: 1.7...2.4,
            longestStepPeriod: 0.87,
            harmonicCorrelation: 0.0
        )
    }

    /// What one sample changed.
    package struct Update: Sendable, Equatable {
        /// Steps counted by this sample: 0, 1, 2 (a missed step filled in), or `confirmationSteps` when a
        /// walk is confirmed.
        package var newSteps = 0
        /// Set when this sample confirmed a walk: the time of its first (back-counted) step, s.
        package var walkStarted: Double?
        /// Set when this sample ended a walk: the time of its last step, s.
        package var walkStopped: Double?
        /// The time of the most recent counted step, s, when `newSteps > 0`.
        package var lastStepTime: Double?

        package init() {}
    }

    /// What the consumers of one detector (the pedometer, the activity) need after each sample, so the
    /// detector runs once per sample however many of them read it.
    package struct Reading: Sendable, Equatable {
        package var update: Update
        package var isWalking: Bool
        /// The smoothed step period, s; 0 when not walking.
        package var stepPeriod: Double
        /// The time of the last counted step, s (−∞ before the first).
        package var lastStepTime: Double

        package init(
            update: Update = Update(),
            isWalking: Bool = false,
            stepPeriod: Double = 0,
            lastStepTime: Double = -.infinity
        ) {
            self.update = update
            self.isWalking = isWalking
            self.stepPeriod = stepPeriod
            self.lastStepTime = lastStepTime
        }

        /// Steps per second while walking, else nil.
        package var cadence: Double? { isWalking && stepPeriod > 0 ? 1 / stepPeriod : nil }
    }

    package let settings: Settings
    /// Whether a walk is confirmed and not yet timed out.
    package private(set) var isWalking = false
    /// Steps counted since start.
    package private(set) var stepCount = 0
    /// The time of the last counted step, s (−∞ before the first).
    package private(set) var lastStepTime = -Double.infinity
    /// The smoothed interval between counted steps, s; 0 when not walking.
    package private(set) var stepPeriod = 0.0

    private var lowPass: LowPassBiquad
    private var horizontalLowPass: (LowPassBiquad, LowPassBiquad)
    private var lastTimestamp = -Double.infinity
    private var baseline = 1.0
    private var meanSquare: Double
    private var armed = false
    private var lastCandidateTime = -Double.infinity
    // Candidate times awaiting confirmation: fixed capacity, allocated once here.
    private var pending: ContiguousArray<Double>
    // Whether the motion may have been gait when each pending crossing came (`gaitLike`): only then is a
    // crossing before the confirmation window back-counted.
    private var pendingGait: ContiguousArray<Bool>
    /// Whether the walk is followed on one crossing a stride (two steps a crossing): confirmed on strides, or
    /// two intervals in a row counted as two steps.
    private var followingStrides = false
    /// Whether the previous interval of the walk was counted as two or more steps.
    private var previousCountedMore = false
    private var pendingCount = 0
    private var gravity = Vector3.zero
    // E[a²] per axis and E[yz], E[xz], E[xy]: the second moments behind `verticalFraction`.
    private var momentDiagonal = Vector3.zero
    private var momentCross = Vector3.zero
    private var verticalSettledAt = Double.infinity
    private var verticalSamples = 0.0
    // The filtered magnitude, for the autocorrelations: fixed capacity.
    package private(set) var periodicity: GaitPeriodicity

    package init(settings: Settings = .defaults) {
        self.settings = settings
        lowPass = LowPassBiquad(cutoff: settings.lowPassCutoff)
        horizontalLowPass = (
            LowPassBiquad(cutoff: settings.lowPassCutoff), LowPassBiquad(cutoff: settings.lowPassCutoff)
        )
        let startRMS = settings.minimumThreshold / max(settings.thresholdFactor, 1e-9)
        meanSquare = startRMS * startRMS
        // Room for a confirmation of double-peaked steps (two crossings per step) and the crossings before it, for the back-count (`backCount`).
        pending = ContiguousArray(repeating: 0, count: 3 * max(settings.confirmationSteps, 1))
        pendingGait = ContiguousArray(repeating: false, count: pending.count)
        periodicity = GaitPeriodicity(window: settings.regularityWindow)
    }

    /// Feeds one accelerometer sample and returns the update with the state after it.
    package mutating func read(timestamp: Double, acceleration: Vector3) -> Reading {
        let u = update(timestamp: timestamp, acceleration: acceleration)
        return Reading(update: u, isWalking: isWalking, stepPeriod: stepPeriod, lastStepTime: lastStepTime)
    }

    /// Feeds one accelerometer sample (g, either sign convention; time in s).
    package mutating func update(timestamp: Double, acceleration: Vector3) -> Update {
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
        periodicity.record(f, horizontal: horizontal(acceleration, dt: dt), at: timestamp)
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

    /// The acceleration across gravity along two fixed-in-device directions perpendicular to the gravity
    /// estimate, low-passed like the magnitude.
    private mutating func horizontal(_ a: Vector3, dt: Double) -> (Double, Double) {
        let g2 = gravity.squaredNorm
        guard g2 > 0 else { return (0, 0) }
        let up = gravity / g2.squareRoot()
        let seed = abs(up.x) < 0.9 ? Vector3(1, 0, 0) : Vector3(0, 1, 0)
        let e1 = up.cross(seed).normalized
        let e2 = up.cross(e1)
        return (horizontalLowPass.0.update(a.dot(e1), dt: dt), horizontalLowPass.1.update(a.dot(e2), dt: dt))
    }

    private mutating func restartFilters(at timestamp: Double, _ acceleration: Vector3) {
        lastTimestamp = timestamp
        // Not primed here: its first update, with the first real interval, primes it and designs it for that
        // period. Primed with a fixed 10 ms, a 50 Hz stream was cut below 3 Hz for its first 6 s or so (the
        // design follows the measured period at 1 % a sample), a 400 Hz one at 12 Hz for its first second.
        lowPass = LowPassBiquad(cutoff: settings.lowPassCutoff)
        horizontalLowPass = (
            LowPassBiquad(cutoff: settings.lowPassCutoff), LowPassBiquad(cutoff: settings.lowPassCutoff)
        )
        baseline = acceleration.norm
        gravity = acceleration
        momentDiagonal = Vector3(
            acceleration.x * acceleration.x,
            acceleration.y * acceleration.y,
            acceleration.z * acceleration.z
        )
        momentCross = Vector3(
            acceleration.y * acceleration.z,
            acceleration.x * acceleration.z,
            acceleration.x * acceleration.y
        )
        verticalSamples = 1
        verticalSettledAt = timestamp + settings.verticalTimeConstant
        periodicity.restart(at: timestamp)
        armed = false
    }

    /// Tracks the mean and the second moments of the acceleration vector. The vertical share is then
    /// `ĝᵀCĝ / trace C` with C the covariance and ĝ the mean's direction (gravity), both from the same
    /// window, so it never mixes a stale gravity estimate into the powers.
    private mutating func trackVertical(_ a: Vector3, dt: Double) {
        // Until a time constant's worth of samples has come, average cumulatively (a bias-corrected start).
        verticalSamples += 1
        let alpha = max(dt / (settings.verticalTimeConstant + dt), 1 / verticalSamples)
        gravity += alpha * (a - gravity)
        momentDiagonal += alpha * (Vector3(a.x * a.x, a.y * a.y, a.z * a.z) - momentDiagonal)
        momentCross += alpha * (Vector3(a.y * a.z, a.x * a.z, a.x * a.y) - momentCross)
    }

    /// The share of the dynamic acceleration's power along gravity over the last few seconds (0…1).
    package var verticalFraction: Double {
        let m = gravity
        let g2 = m.squaredNorm
        guard g2 > 0 else { return 0 }
        // Covariance C = E[aaᵀ] − mmᵀ.
        let cxx = momentDiagonal.x - m.x * m.x
        let cyy = momentDiagonal.y - m.y * m.y
        let czz = momentDiagonal.z - m.z * m.z
        let cyz = momentCross.x - m.y * m.z
        let cxz = momentCross.y - m.x * m.z
        let cxy = momentCross.z - m.x * m.y
        let trace = cxx + cyy + czz
        guard trace > 0 else { return 0 }
        let vertical =
            (m.x * m.x * cxx + m.y * m.y * cyy + m.z * m.z * czz
                + 2 * (m.y * m.z * cyz + m.x * m.z * cxz + m.x * m.y * cxy)) / g2
        return min(max(vertical / trace, 0), 1)
    }

    private mutating func candidate(at time: Double, into out: inout Update) {
        let interval = time - lastCandidateTime
        lastCandidateTime = time
        if isWalking {
            relock(at: time)
            guard gaitPlausible(period: stepPeriod, at: time) else {
                // The motion stopped looking like steps (a vehicle after a false start, waving): end the walk
                // here and let this candidate start a new confirmation.
                isWalking = false
                stepPeriod = 0
                out.walkStopped = lastStepTime
                pending[0] = time
                pendingGait[0] = gaitLike(at: time)
                pendingCount = 1
                return
            }
            // A gap of about two or three step periods in a steady walk is steps too weak to cross the
            // threshold (a soft footfall, a turn): count them rather than let the cadence estimate jump.
            let ratio = stepPeriod > 0 ? interval / stepPeriod : 0
            var steps = settings.missedStepRatio.contains(ratio) ? max(Int(ratio.rounded()), 2) : 1
            // Followed on one crossing a stride, the interval is two steps, and the nearest whole number of
            // steps is the count: the crossing wanders within the stride (a pocket's knocks and the two legs'
            // strikes take turns being the one that crosses), and a stride 15 % short read as one step both
            // lost a step and stretched the period estimate until the next strides were read as one step too.
            if followingStrides, ratio >= 1.5 { steps = min(Int(ratio.rounded()), 4) }
            followingStrides = steps >= 2 && (followingStrides || previousCountedMore)
            previousCountedMore = steps >= 2
            let oneStep = interval / Double(steps)
            if oneStep < settings.maximumStepInterval {
                stepPeriod = stepPeriod > 0 ? stepPeriod + 0.2 * (oneStep - stepPeriod) : oneStep
            }
            count(steps, lastAt: time, into: &out)
            return
        }
        if pendingCount > 0, time - pending[pendingCount - 1] > settings.maximumStepInterval {
            pendingCount = 0
        }
        if pendingCount == pending.count {
            for i in 1..<pending.count {
                pending[i - 1] = pending[i]
                pendingGait[i - 1] = pendingGait[i]
            }
            pendingCount -= 1
        }
        pending[pendingCount] = time
        pendingGait[pendingCount] = gaitLike(at: time)
        pendingCount += 1
        let k = settings.confirmationSteps
        guard pendingCount >= k, let windowSteps = regularSteps(from: pendingCount - k) else { return }
        let crossingPeriod = (time - pending[pendingCount - k]) / Double(max(windowSteps, 1))
        var period = periodicity.stepPeriod(
            crossingPeriod: crossingPeriod,
            longestStep: settings.longestStepPeriod,
            harmonicCorrelation: settings.harmonicCorrelation,
            strideRegularity: settings.minimumStrideRegularity
        )
        // Crossings slower than the slowest step are strides: only one leg's strike crosses the threshold
        // (a pocket on that thigh feels its own leg's strike and swing, the other leg's strike only through
        // the pelvis), so each crossing is two steps.
        if period == crossingPeriod, crossingPeriod > settings.longestStepPeriod { period = crossingPeriod / 2 }
        // Two crossings per step: wait until the crossings span as many steps as a plain confirmation.
        let doublePeaks = period > crossingPeriod
        var first = pendingCount - k
        if doublePeaks {
            guard pendingCount >= 2 * k - 1, isRegular(from: pendingCount - (2 * k - 1)) else { return }
            first = pendingCount - (2 * k - 1)
        }
        guard gaitPlausible(period: period, at: time) else { return }
        isWalking = true
        stepPeriod = period
        followingStrides = !doublePeaks && period < crossingPeriod
        previousCountedMore = followingStrides
        let (start, steps) =
            doublePeaks
            ? (pending[first], Self.steps(from: pending[first], to: time, period: period))
            : backCount(from: first, period: period)
        out.walkStarted = start
        pendingCount = 0
        count(steps, lastAt: time, into: &out)
    }

    /// Steps between two crossings `period` apart on average, both counted.
    private static func steps(from start: Double, to end: Double, period: Double) -> Int {
        period > 0 ? Int(((end - start) / period).rounded()) + 1 : 1
    }

    /// The first step of a walk just confirmed on the crossings from `first` on, and how many steps it has
    /// made so far: the confirmation window's, and before the window the earlier crossings while they keep
    /// the window's rhythm (within `backCountTolerance`) and the motion was gait-like when they came
    /// (`gaitLike`). So steps a walk made before it was confirmed are counted once it is: the reported count
    /// catches up, as Core Motion's does. A bag swinging during a still period makes crossings as regular,
    /// but its motion is mostly sideways: they are not back-counted. The price: a walk's first steps taken
    /// while the vertical share still holds the handling before the walk are not back-counted either, and
    /// nothing else measured here tells the two apart (the vertical share from each crossing to the
    /// confirmation, and that of each step's own stretch, were tried on the Oxford walk starts and the bag
    /// stress cases: they overlap).
    private func backCount(from first: Int, period: Double) -> (start: Double, steps: Int) {
        let last = pendingCount - 1
        var steps = Self.steps(from: pending[first], to: pending[last], period: period)
        guard period > 0, last > first else { return (pending[first], steps) }
        // Steps per crossing in the window: one, or two when the crossings are strides. Before the window
        // an interval may be one spacing or two (a crossing missed), and a crossing just after a step is that
        // step's twin (a double bump), skipped; the earliest interval counted must be a single spacing: a
        // longer one there is more likely a walk's slow first step, or a pause, than a missed crossing.
        let perCrossing = min(max(((pending[last] - pending[first]) / Double(last - first) / period).rounded(), 1), 2)
        let spacing = perCrossing * period
        let tolerance = Self.backCountTolerance * spacing
        var j = first
        var previous = first
        var lastAdded = 0
        var k = first - 1
        while k >= 0, pendingGait[k] {
            let d = pending[j] - pending[k]
            if d < spacing - tolerance {
                k -= 1  // a twin crossing
                continue
            }
            let n = (d / spacing).rounded()
            guard n >= 1, n <= 2, abs(d - n * spacing) <= n * tolerance else { break }
            lastAdded = Int(n)
            steps += Int(n * perCrossing)
            previous = j
            j = k
            k -= 1
        }
        if lastAdded == 2 {
            steps -= Int(2 * perCrossing)
            j = previous
        }
        return (pending[j], steps)
    }

    /// How far, as a fraction of the window's crossing spacing, an earlier crossing may be off the walk's
    /// rhythm and still be back-counted (the confirmation window itself accepts intervals varying up to
    /// `maximumIntervalRatio`).
    static let backCountTolerance = 0.3

    /// Whether the motion now may be gait: the vertical share is at least its minimum, or not yet settled
    /// (the first seconds after a start or a gap, when it says nothing either way).
    private func gaitLike(at time: Double) -> Bool {
        time < verticalSettledAt || verticalFraction >= settings.minimumVerticalFraction
    }

    /// Re-reads the step period from the stride while walking, so a walk confirmed on the wrong side of
    /// a double peak (every crossing a step, or every other) does not stay there. Hysteresis keeps it
    /// from flipping: halving needs the signal to repeat clearly after half the current period.
    private mutating func relock(at time: Double) {
        guard stepPeriod > 0 else { return }
        // A period beyond the slowest step is a stride (one leg's strikes only, see `candidate`): its
        // steps come twice as often. A walk confirmed early in its ramp on the strides of one leg drifts
        // here as it speeds up.
        if stepPeriod > settings.longestStepPeriod {
            stepPeriod /= 2
            return
        }
        let half = stepPeriod / 2
        if half >= settings.minimumStepInterval,
            periodicity.autocorrelation(lag: half) >= settings.harmonicCorrelation + 0.2,
            periodicity.autocorrelation(lag: stepPeriod) >= settings.minimumStrideRegularity,
            periodicity.stepPeriod(
                crossingPeriod: half,
                longestStep: settings.longestStepPeriod,
                harmonicCorrelation: settings.harmonicCorrelation,
                strideRegularity: settings.minimumStrideRegularity
            ) == half
        {
            stepPeriod = half
            return
        }
        let doubled = periodicity.stepPeriod(
            crossingPeriod: stepPeriod,
            longestStep: settings.longestStepPeriod,
            harmonicCorrelation: settings.harmonicCorrelation,
            strideRegularity: settings.minimumStrideRegularity
        )
        if doubled > stepPeriod { stepPeriod = doubled }
    }

    /// Whether the recent motion looks like gait: enough of it vertical, and repeating stride to stride.
    private func gaitPlausible(period: Double, at time: Double) -> Bool {
        time >= verticalSettledAt && verticalFraction >= settings.minimumVerticalFraction
            && regularity(stepPeriod: period) >= settings.minimumStrideRegularity
    }

    /// The larger of the autocorrelations at one step and at one stride (`GaitPeriodicity.regularity`).
    package func regularity(stepPeriod: Double) -> Double {
        periodicity.regularity(stepPeriod: stepPeriod)
    }

    /// Normalised autocorrelation of the recent filtered magnitude at a lag in s (−1…1).
    package func autocorrelation(lag seconds: Double) -> Double {
        periodicity.autocorrelation(lag: seconds)
    }

    /// How many steps the pending crossings from index `start` on span when they come at a steady rate
    /// (`isRegular`), or at a steady rate with single crossings missing (`withMissedCrossings`), or one a step
    /// with alternate steps of two lengths (`isUneven`); nil when irregular.
    private func regularSteps(from start: Int) -> Int? {
        let intervals = pendingCount - 1 - start
        guard intervals > 0 else { return 0 }
        if isRegular(from: start) { return intervals }
        if let steps = withMissedCrossings(from: start) { return steps }
        return isUneven(from: start) ? intervals : nil
    }

    /// The steps the crossings from `start` on span when they come at a steady rate with single crossings
    /// missing — an interval of about two periods (`missedStepRatio`) between others of one, as when the
    /// other leg's softer strike sometimes stays under the threshold, though not first; else nil.
    private func withMissedCrossings(from start: Int) -> Int? {
        let intervals = pendingCount - 1 - start
        var shortest = Double.infinity
        for i in (start + 1)..<pendingCount { shortest = min(shortest, pending[i] - pending[i - 1]) }
        var steps = 0
        var singles = 0
        // The first interval must be single: a long one there is more likely a walk's slow first step.
        guard pending[start + 1] - pending[start] <= Self.singleIntervalRatio * shortest else { return nil }
        for i in (start + 1)..<pendingCount {
            let ratio = (pending[i] - pending[i - 1]) / shortest
            if ratio <= Self.singleIntervalRatio {
                steps += 1
                singles += 1
            } else if settings.missedStepRatio.contains(ratio),
                pending[i] - pending[i - 1] <= settings.maximumStepInterval
            {
                steps += 2
            } else {
                return nil
            }
        }
        // The shortest interval must be a step, not a stray: most intervals are single.
        return 2 * singles > intervals ? steps : nil
    }

    /// Whether the crossings from `start` on are one a step with alternate steps of two lengths: every other
    /// interval agrees with the one two before it (within `maximumIntervalRatio`), and each pair of
    /// consecutive intervals is one steady stride, longer than the slowest step (`longestStepPeriod`: so two
    /// steps, not one double-peaked step) and at most two of them. A pocket on one thigh feels its own leg's
    /// strike and the other's at different points of their steps, so its crossings can alternate 0.4 and
    /// 0.8 s while the feet alternate 0.5 and 0.7 s (the Oxford validation set's back-pocket walk of user 1 at
    /// 100 Hz): beyond `maximumIntervalRatio` for `isRegular`, and only half the intervals single for
    /// `withMissedCrossings`. Before issue 41 that walk was confirmed only 15 s in, on knocks that passed for
    /// double peaks, and its first 21 steps were lost. Whatever makes two crossings a stride, each crossing is a
    /// step.
    private func isUneven(from start: Int) -> Bool {
        guard pendingCount - start > 3 else { return false }
        for i in (start + 1)..<pendingCount {
            let d = pending[i] - pending[i - 1]
            guard d <= settings.maximumStepInterval else { return false }
            if i >= start + 3 {
                let alternate = pending[i - 2] - pending[i - 3]
                guard max(d, alternate) <= settings.maximumIntervalRatio * min(d, alternate) else { return false }
            }
        }
        let pairs = pairSpan(from: start)
        return pairs.shortest > settings.longestStepPeriod && pairs.longest <= 2 * settings.longestStepPeriod
            && pairs.longest <= settings.maximumIntervalRatio * pairs.shortest
    }

    /// The shortest and longest sum of two consecutive intervals from `start` on (needs three crossings): a stride
    /// when they are two steps (`isUneven`), one step when a step crosses twice (`isRegular`'s double peaks).
    private func pairSpan(from start: Int) -> (shortest: Double, longest: Double) {
        var shortest = Double.infinity
        var longest = 0.0
        for i in (start + 2)..<pendingCount {
            let d = pending[i] - pending[i - 2]
            shortest = min(shortest, d)
            longest = max(longest, d)
        }
        return (shortest, longest)
    }

    /// The longest interval, relative to the shortest, read as one step when intervals of one and two steps
    /// mix (`regularSteps`).
    static let singleIntervalRatio = 1.35

    /// Whether the pending crossings from index `start` on come at a steady rate: their intervals, or the
    /// sums of consecutive pairs (double peaks alternate a short and a long interval), agree within
    /// `maximumIntervalRatio` and none exceeds `maximumStepInterval`.
    private func isRegular(from start: Int) -> Bool {
        guard pendingCount - start > 1 else { return true }
        var shortest = Double.infinity
        var longest = 0.0
        for i in (start + 1)..<pendingCount {
            let d = pending[i] - pending[i - 1]
            shortest = min(shortest, d)
            longest = max(longest, d)
        }
        guard longest <= settings.maximumStepInterval else { return false }
        if longest <= settings.maximumIntervalRatio * shortest { return true }
        guard pendingCount - start > 2 else { return false }
        let pairs = pairSpan(from: start)
        return pairs.longest <= settings.maximumIntervalRatio * pairs.shortest
            && pairs.longest <= settings.longestStepPeriod
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
