import MotionModel

/// Core Motion's activity: stationary, walking, running, cycling, automotive, with a confidence, from the
/// accelerometer and gyroscope, one sample per `update`.
///
/// Samples are summarised per `hop` (count, sum, sum of squares, min, max of both magnitudes), so a window of
/// `windowLength` is the exact merge of its last sub-windows and is classified every `hop` with no per-sample
/// storage. `ActivityModel` turns a window into class probabilities; they are smoothed over
/// `probabilityTimeConstant`, and the reported class changes only when another class leads it by
/// `switchMargin` (hysteresis). Flags are not exclusive: a car that stops (stationary after automotive) stays
/// `automotive` as well for `automotiveHold`, which is a red light or a traffic jam, not a parked car.
///
/// The confidence says what the evidence is. Stationary, walking and automotive are trained and checked on
/// real recordings (TMD's windows, by window; walking also on the Oxford walks through the gait); running
/// and cycling only on simulated windows — no public labelled raw recording with running or cycling could
/// be had to measure them on (BENCHMARKS.md, Activity) — so they are reported with confidence `low`
/// however probable the model finds them (`isValidatedOnRealData`).
public struct ActivityEstimator: Sendable {
    public struct Settings: Sendable, Equatable {
        /// Length of a classified window, s (the model was trained on 5 s windows).
        public var windowLength: Double
        /// Time between classifications, s; `windowLength` should be a whole multiple of it.
        public var hop: Double
        /// Time constant of the probability smoothing, s.
        public var probabilityTimeConstant: Double
        /// How far another class's smoothed probability must exceed the current one's to take over.
        public var switchMargin: Double
        /// How long `automotive` stays set after a vehicle comes to rest, s.
        public var automotiveHold: Double
        /// Smoothed probability from which the confidence is `medium`.
        public var mediumConfidence: Double
        /// Smoothed probability from which the confidence is `high`.
        public var highConfidence: Double

        public init(
            windowLength: Double,
            hop: Double,
            probabilityTimeConstant: Double,
            switchMargin: Double,
            automotiveHold: Double,
            mediumConfidence: Double,
            highConfidence: Double
        ) {
            self.windowLength = windowLength
            self.hop = hop
            self.probabilityTimeConstant = probabilityTimeConstant
            self.switchMargin = switchMargin
            self.automotiveHold = automotiveHold
            self.mediumConfidence = mediumConfidence
            self.highConfidence = highConfidence
        }

        public static let defaults = Settings(
            windowLength: 5,
            hop: 1,
            probabilityTimeConstant: 4,
            switchMargin: 0.15,
            automotiveHold: 180,
            mediumConfidence: 0.5,
            highConfidence: 0.8
        )
    }

    /// Running statistics of one magnitude over a sub-window.
    struct Accumulator: Sendable {
        var count = 0.0
        var sum = 0.0
        var sumSquares = 0.0
        var min = Double.infinity
        var max = -Double.infinity

        mutating func add(_ x: Double) {
            count += 1
            sum += x
            sumSquares += x * x
            min = Swift.min(min, x)
            max = Swift.max(max, x)
        }

        mutating func merge(_ o: Accumulator) {
            count += o.count
            sum += o.sum
            sumSquares += o.sumSquares
            min = Swift.min(min, o.min)
            max = Swift.max(max, o.max)
        }

        var mean: Double { count > 0 ? sum / count : 0 }
        var std: Double { count > 0 ? Swift.max(sumSquares / count - mean * mean, 0).squareRoot() : 0 }
    }

    public let settings: Settings
    /// The current activity; `unknown` until the first full window.
    public private(set) var activity: MotionActivity
    /// The statistics of the last classified window.
    public private(set) var lastWindow: ActivityModel.WindowStatistics?
    /// The smoothed class probabilities, in `ActivityModel.ActivityClass` order.
    public private(set) var smoothed: ActivityModel.Probabilities = (0, 0, 0, 0, 0)
    private var current: ActivityModel.ActivityClass?
    private var automotiveUntil = -Double.infinity
    private var subStart: Double?
    private var acc = Accumulator()
    private var gyro = Accumulator()
    // Fixed-capacity rings of finished sub-windows, allocated once here.
    private var accRing: ContiguousArray<Accumulator>
    private var gyroRing: ContiguousArray<Accumulator>
    private var ringNext = 0
    private var ringFilled = 0

    public init(settings: Settings = .defaults, startDate: Double = 0) {
        self.settings = settings
        let n = Swift.max(Int((settings.windowLength / settings.hop).rounded()), 1)
        accRing = ContiguousArray(repeating: Accumulator(), count: n)
        gyroRing = ContiguousArray(repeating: Accumulator(), count: n)
        activity = MotionActivity(startDate: startDate, unknown: true, confidence: .low)
    }

    /// Feeds one sample; returns the new activity when its flags or confidence changed.
    public mutating func update(_ sample: IMUSample) -> MotionActivity? {
        let t = sample.timestamp
        guard t.isFinite else { return nil }
        if let a = sample.acceleration, a.isFinite { acc.add(a.norm * standardGravity) }
        if let w = sample.rotationRate, w.isFinite { gyro.add(w.norm) }
        guard let start = subStart else {
            subStart = t
            return nil
        }
        guard t - start >= settings.hop else { return nil }
        subStart = t
        accRing[ringNext] = acc
        gyroRing[ringNext] = gyro
        ringNext = (ringNext + 1) % accRing.count
        ringFilled = Swift.min(ringFilled + 1, accRing.count)
        acc = Accumulator()
        gyro = Accumulator()
        guard ringFilled == accRing.count else { return nil }
        var a = Accumulator()
        var g = Accumulator()
        for i in 0..<accRing.count {
            a.merge(accRing[i])
            g.merge(gyroRing[i])
        }
        guard a.count > 0, g.count > 0 else {
            // The model needs both sensors; without a gyroscope the activity is unknown.
            return report(MotionActivity(startDate: t, unknown: true, confidence: .low), at: t)
        }
        let w = ActivityModel.WindowStatistics(
            accelerationMean: a.mean,
            accelerationMin: a.min,
            accelerationMax: a.max,
            accelerationStd: a.std,
            rotationMean: g.mean,
            rotationMin: g.min,
            rotationMax: g.max,
            rotationStd: g.std
        )
        return update(window: w, at: t)
    }

    /// Feeds one window's statistics directly, ending at `t` (s) — for recorded statistics such as TMD's,
    /// or a window computed elsewhere; `update(_:)` calls it every `hop`. Returns the new activity when its
    /// flags or confidence changed.
    public mutating func update(window w: ActivityModel.WindowStatistics, at t: Double) -> MotionActivity? {
        lastWindow = w
        let p = ActivityModel.probabilities(w)
        if current == nil {
            smoothed = p
        } else {
            let k = settings.hop / (settings.probabilityTimeConstant + settings.hop)
            smoothed = (
                smoothed.0 + k * (p.0 - smoothed.0), smoothed.1 + k * (p.1 - smoothed.1),
                smoothed.2 + k * (p.2 - smoothed.2), smoothed.3 + k * (p.3 - smoothed.3),
                smoothed.4 + k * (p.4 - smoothed.4)
            )
        }
        let (leader, leaderP) = ActivityModel.best(smoothed)
        if let c = current {
            if leader != c, leaderP >= Self.probability(of: c, in: smoothed) + settings.switchMargin {
                if c == .automotive, leader == .stationary { automotiveUntil = t + settings.automotiveHold }
                if leader != .stationary { automotiveUntil = -.infinity }
                current = leader
            }
        } else {
            current = leader
        }
        let c = current ?? leader
        let cp = Self.probability(of: c, in: smoothed)
        let confidence: MotionActivity.Confidence =
            !Self.isValidatedOnRealData(c)
            ? .low : cp >= settings.highConfidence ? .high : cp >= settings.mediumConfidence ? .medium : .low
        var next = MotionActivity(startDate: t - settings.windowLength, confidence: confidence)
        switch c {
        case .stationary:
            next.stationary = true
            next.automotive = t < automotiveUntil
        case .walking: next.walking = true
        case .running: next.running = true
        case .cycling: next.cycling = true
        case .automotive: next.automotive = true
        }
        return report(next, at: t)
    }

    private mutating func report(_ next: MotionActivity, at t: Double) -> MotionActivity? {
        if next.hasSameFlags(as: activity) {
            guard next.confidence != activity.confidence else { return nil }
            activity.confidence = next.confidence
            return activity
        }
        activity = next
        return activity
    }

    /// Whether the classifier's answer for a class has been measured on real labelled recordings: stationary,
    /// walking and automotive have (TMD); running and cycling only on simulated windows, so their
    /// confidence stays `low`.
    public static func isValidatedOnRealData(_ c: ActivityModel.ActivityClass) -> Bool {
        switch c {
        case .stationary, .walking, .automotive: true
        case .running, .cycling: false
        }
    }

    static func probability(of c: ActivityModel.ActivityClass, in p: ActivityModel.Probabilities) -> Double {
        switch c {
        case .stationary: p.0
        case .walking: p.1
        case .running: p.2
        case .cycling: p.3
        case .automotive: p.4
        }
    }
}
