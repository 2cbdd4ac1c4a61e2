import MotionModel

/// The activity classifier's front end: accelerometer and gyroscope samples at any rate, with jitter, turned
/// into one fixed 25 Hz series — each output value the average of the signal over its 40 ms.
///
/// The classifier was trained on DSADS, recorded at 25 Hz; the agent runs its sensors at 25 Hz and up. So
/// that a 100 Hz or 800 Hz stream gives the classifier what a 25 Hz one does, every input is brought to the
/// same grid: the samples are joined by straight lines and the line is averaged over each 40 ms bin (a box
/// filter, the anti-aliasing of the decimation; at 25 Hz input it averages neighbours, which training saw
/// too, since the training windows come through this type). A sample without one of the two sensors holds
/// that sensor's last value. A gap longer than `maximumGap` restarts the series.
///
/// Fixed state, no storage: `add` and `nextBin` allocate nothing.
package struct ActivityResampler: Sendable {
    /// The output rate, Hz: DSADS' rate, the lowest the agent offers.
    package static let rateHz = 25.0
    /// The output period, s.
    package static let period = 1 / rateHz
    /// The longest time between two samples that is still joined by a line, s.
    package static let maximumGap = 0.5

    /// One output value: the averages over a bin of the acceleration (m/s², specific-force magnitude
    /// units; the sign convention does not matter to the features) and the rotation rate (rad/s).
    package struct Bin: Sendable, Equatable {
        package var acceleration: Vector3
        package var rotationRate: Vector3

        package init(acceleration: Vector3, rotationRate: Vector3) {
            self.acceleration = acceleration
            self.rotationRate = rotationRate
        }
    }

    /// Whether a sample continued the series or started it over.
    package enum Continuity: Sendable, Equatable {
        case continued
        /// The first sample, or one after a gap: whatever came before it is not continuous with it.
        case restarted
    }

    private var origin = 0.0
    private var binIndex = 0
    private var lastTime = -Double.infinity
    private var lastAcceleration = Vector3.zero
    private var lastRotation = Vector3.zero
    private var integralAcceleration = Vector3.zero
    private var integralRotation = Vector3.zero
    /// Whether each sensor has been seen since the last restart.
    package private(set) var hasAcceleration = false
    package private(set) var hasRotation = false

    package init() {}

    /// The end of the bin being filled, s.
    private var binEnd: Double { origin + Double(binIndex + 1) * Self.period }

    // The sample being worked into bins (`add` sets it, `nextBin` consumes it).
    private var pendingTime = -Double.infinity
    private var pendingAcceleration = Vector3.zero
    private var pendingRotation = Vector3.zero
    private var pending = false

    /// Takes one sample (acceleration in g, either sign convention; rotation rate in rad/s; either may be nil;
    /// a sample at or before the previous one is ignored). Then call `nextBin()` until it returns nil for the
    /// bins the sample completed, oldest first.
    package mutating func add(timestamp t: Double, acceleration: Vector3?, rotationRate: Vector3?) -> Continuity {
        while nextBin() != nil {}
        let a = acceleration.map { standardGravity * $0 } ?? lastAcceleration
        let w = rotationRate ?? lastRotation
        if !lastTime.isFinite || t - lastTime > Self.maximumGap {
            restart(at: t, acceleration: a, rotationRate: w)
            hasAcceleration = acceleration != nil
            hasRotation = rotationRate != nil
            return .restarted
        }
        guard t > lastTime else { return .continued }
        hasAcceleration = hasAcceleration || acceleration != nil
        hasRotation = hasRotation || rotationRate != nil
        pendingTime = t
        pendingAcceleration = a
        pendingRotation = w
        pending = true
        return .continued
    }

    /// The next bin the last sample completed, or nil when there is none (left over).
    package mutating func nextBin() -> Bin? {
        guard pending else { return nil }
        let t = pendingTime
        let a = pendingAcceleration
        let w = pendingRotation
        let span = t - lastTime
        guard t >= binEnd else {
            let piece = span / 2
            integralAcceleration += piece * (lastAcceleration + a)
            integralRotation += piece * (lastRotation + w)
            lastTime = t
            lastAcceleration = a
            lastRotation = w
            pending = false
            return nil
        }
        let end = binEnd
        let f = span > 0 ? (end - lastTime) / span : 1
        let aEnd = lastAcceleration + f * (a - lastAcceleration)
        let wEnd = lastRotation + f * (w - lastRotation)
        let piece = (end - lastTime) / 2
        integralAcceleration += piece * (lastAcceleration + aEnd)
        integralRotation += piece * (lastRotation + wEnd)
        let bin = Bin(acceleration: Self.rateHz * integralAcceleration, rotationRate: Self.rateHz * integralRotation)
        integralAcceleration = .zero
        integralRotation = .zero
        lastTime = end
        lastAcceleration = aEnd
        lastRotation = wEnd
        binIndex += 1
        return bin
    }

    private mutating func restart(at t: Double, acceleration a: Vector3, rotationRate w: Vector3) {
        pending = false
        origin = t
        binIndex = 0
        lastTime = t
        lastAcceleration = a
        lastRotation = w
        integralAcceleration = .zero
        integralRotation = .zero
    }
}
