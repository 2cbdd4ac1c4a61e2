import MotionModel

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Falls, like Core Motion's `CMFallDetectionManager`, from the accelerometer alone or with the gyroscope, at any
/// rate from 50 to 200 Hz, in any placement: nothing here depends on how the device is worn or on its axes.
///
/// A fall is an impact after which the body's posture changed and it lies still. The detector keeps 0.1 s
/// summaries of the signal (`MagnitudeBlock`, a ring of 4 s) and judges each candidate impact — a local maximum
/// of |a| of at least `candidatePeakG` over ±0.5 s — 2 s after it, when it knows what followed:
/// 1. gates, placement- and axis-free: the direction of gravity in the device (the mean acceleration) 2 to 1 s
///    before the impact and 1 to 2 s after it differ by at least `minimumOrientationChangeDegrees` (the body lies
///    differently), and |a| varies by at most `maximumStillnessG` (standard deviation) 1 to 2 s after it;
/// 2. a logistic score on magnitudes (`FallScore`): the smoothed peak (the largest |a| through a first-order
///    low-pass of `peakTimeConstantSeconds` over the second around the impact), the impact energy (the area
///    between |a| and 1 g over that second), the stillness, and with a gyroscope the largest rotation rate around
///    the impact. Neither the smoothed peak nor the energy grows with the rate as the raw peak does: a 50 Hz
///    sensor misses the top of a 5–10 ms spike that a 200 Hz one catches.
/// The fall is reported at once (latency ≤ 2.1 s from the impact), then resolved: `rejected` as soon as the
/// device has been active for `recoveryActivitySeconds` within `responseWindowSeconds` (the wearer got up),
/// `unresponsive` when the window ends without that, or `confirmed`/`dismissed` by `resolve(_:at:)`.
///
/// The structure (blocks, windows) and `FallScore.shipped` were chosen with subjects held out on SisFall
/// (`scripts/research/falls/tune_falls.py`, which computes the same features; BENCHMARKS.md "Falls"). One
/// sample per `update`, no allocation after `init`, no clock: time is the samples' timestamps.
package struct FallDetector: Sendable {
    package struct Settings: Sendable, Equatable {
        /// Smallest peak |a| of a candidate impact, g. SisFall's softest falls peak at 1.7 g at the waist.
        package var candidatePeakG: Double
        /// Smallest change of the direction of gravity in the device across the impact, degrees: a fall ends in
        /// another posture. Fixed in the research (a gate, not fitted).
        package var minimumOrientationChangeDegrees: Double
        /// Largest standard deviation of |a| from 1 to 2 s after the impact, g: a fallen body lies still (the score
        /// weighs stillness too; this gate only keeps obvious movement out).
        package var maximumStillnessG: Double
        /// Time constant of the first-order low-pass |a| goes through before its peak enters the score, s: the
        /// impact's height at a fixed bandwidth, the same at 50 and 200 Hz. Chosen with the score (`FallScore`).
        package var peakTimeConstantSeconds: Double
        /// The decision on the candidates that pass the gates.
        package var score: FallScore
        /// After a fall is reported, the time within which resumed activity resolves it as `rejected`; past it,
        /// it is `unresponsive`, s. Apple Watch calls emergency services after about a minute of immobility.
        package var responseWindowSeconds: Double
        /// Activity, accumulated over 0.1 s blocks, that resolves a fall as `rejected`, s. From their falls' decisions
        /// to the trials' ends (median 6 s), SisFall's fallen subjects were active 1.2 s at most (99th percentile of
        /// 675 falls; the largest 4.2 s); walking is active 72–100 % of the time (`tune_falls.py` prints both).
        package var recoveryActivitySeconds: Double
        /// A block is active when the mean ||a| − baseline| over it exceeds this, g; the baseline follows |a| with
        /// a 1 s time constant, so a miscalibrated |a| at rest (SisFall's reads 0.81–1.18 g) is not activity.
        package var activityAccelerationG: Double
        /// ...or, with a gyroscope, when its mean |ω| exceeds this, rad/s.
        package var activityRotationRateRadPerS: Double

        package init(
            candidatePeakG: Double,
            minimumOrientationChangeDegrees: Double,
            maximumStillnessG: Double,
            peakTimeConstantSeconds: Double,
            score: FallScore,
            responseWindowSeconds: Double,
            recoveryActivitySeconds: Double,
            activityAccelerationG: Double,
            activityRotationRateRadPerS: Double
        ) {
            self.candidatePeakG = candidatePeakG
            self.minimumOrientationChangeDegrees = minimumOrientationChangeDegrees
            self.maximumStillnessG = maximumStillnessG
            self.peakTimeConstantSeconds = peakTimeConstantSeconds
            self.score = score
            self.responseWindowSeconds = responseWindowSeconds
            self.recoveryActivitySeconds = recoveryActivitySeconds
            self.activityAccelerationG = activityAccelerationG
            self.activityRotationRateRadPerS = activityRotationRateRadPerS
        }

        /// The shipped set: the gates and score of `tune_falls.py` (one set for every placement and rate), a
        /// minute's response window like Apple Watch's, and the activity thresholds measured on SisFall.
        package static let defaults = Settings(
            candidatePeakG: 1.6,
            minimumOrientationChangeDegrees: 30,
            maximumStillnessG: 0.3,
            peakTimeConstantSeconds: 0.2,
            score: .shipped,
            responseWindowSeconds: 60,
            recoveryActivitySeconds: 3,
            activityAccelerationG: 0.05,
            activityRotationRateRadPerS: 0.5
        )
    }

    /// What one sample produced.
    package struct Update: Sendable, Equatable {
        /// A fall the detector just became sure of (`resolution` nil).
        package var fall: FallDetectionEvent?
        /// The follow-up of an earlier fall, with its resolution.
        package var resolution: FallDetectionEvent?

        package init(fall: FallDetectionEvent? = nil, resolution: FallDetectionEvent? = nil) {
            self.fall = fall
            self.resolution = resolution
        }
    }

    /// The length of a block, s: the resolution of every window below.
    package static let blockSeconds = 0.1
    /// Blocks of ±0.5 s in which a candidate must be the largest |a|.
    static let localMaximumBlocks = 5
    /// The windows, in blocks from the candidate's: before [−20, −10), after [10, 20), energy and smoothed peak
    /// [−5, 5), gyroscope [−10, 10). The decision is taken when block +19 closes.
    static let before = -20..<(-10)
    static let after = 10..<20
    static let energy = -5..<5
    static let rotation = -10..<10
    /// Blocks kept: the 40 a decision reads, rounded up to a power of two for the ring's index mask.
    static let ringCapacity = 64
    /// A gap between samples longer than this restarts the blocks (the windows would mix unrelated motion), s.
    static let maximumGapSeconds = 1.0
    /// Time constant of the |a| baseline the activity is measured against, s.
    static let baselineTimeConstantSeconds = 1.0
    /// Sample times are placed into blocks with this tolerance, s, so a sample exactly on a boundary (n / 200 Hz
    /// against k × 0.1 s) does not fall into the earlier block by a rounding error.
    static let boundaryToleranceSeconds = 1e-6

    /// Read at every sample: `MotionEventDetector.reconfigure` changes them between two.
    package internal(set) var settings: Settings
    /// The fall reported and not yet resolved.
    package private(set) var unresolvedFall: FallDetectionEvent?
    /// The last candidate impact judged (fall or not), with its features: what `motion-bench falls --explain` prints.
    package private(set) var lastCandidate: Features?

    var blocks: ContiguousArray<MagnitudeBlock>
    /// The time block 0 starts at (the first sample, or the first after a restart), s.
    private var origin = 0.0
    /// The block being filled; blocks before 0 do not exist (before the start).
    var current = 0
    private var started = false
    private var lastTimestamp = -Double.infinity
    /// The block of the last reported fall: candidates up to its decision belong to the same fall.
    private var lastFallBlock = Int.min / 2
    private var baseline = 1.0
    /// |a| through the low-pass of `peakTimeConstantSeconds`, g.
    private var smoothedMagnitude = 1.0
    private var recoveryActivity = 0.0

    package init(settings: Settings = .defaults) {
        self.settings = settings
        blocks = ContiguousArray(repeating: .empty, count: Self.ringCapacity)
    }

    /// Feeds one sample: acceleration in g (either sign convention: only magnitudes and angles are used), rotation
    /// rate in rad/s or nil, time in s.
    package mutating func update(timestamp t: Double, acceleration a: Vector3, rotationRate: Vector3?) -> Update {
        var out = Update()
        guard t.isFinite, a.isFinite else { return out }
        if let fall = unresolvedFall, t - fall.detectionDate >= settings.responseWindowSeconds {
            out.resolution = fall.resolved(.unresponsive, at: t)
            unresolvedFall = nil
        }
        let m = a.norm
        if !started || t < lastTimestamp || t - lastTimestamp > Self.maximumGapSeconds {
            restart(at: t, magnitude: m)
        }
        let index = Int(((t - origin + Self.boundaryToleranceSeconds) / Self.blockSeconds).rounded(.down))
        while current < index {
            close(block: current, at: t, into: &out)
            current += 1
            blocks[slot(current)] = .empty
        }
        let dt = t - lastTimestamp
        let activity = abs(m - baseline)
        if dt > 0 {
            baseline += dt / (Self.baselineTimeConstantSeconds + dt) * (m - baseline)
            smoothedMagnitude += dt / (settings.peakTimeConstantSeconds + dt) * (m - smoothedMagnitude)
        }
        var rate: Double?
        if let w = rotationRate, w.isFinite { rate = w.norm }
        blocks[slot(current)].add(
            timestamp: t,
            acceleration: a,
            magnitude: m,
            smoothedMagnitude: smoothedMagnitude,
            activity: activity,
            rotationRate: rate
        )
        lastTimestamp = t
        return out
    }

    /// Feeds one sample (nothing happens without an acceleration).
    package mutating func update(_ sample: IMUSample) -> Update {
        guard let a = sample.acceleration else { return Update() }
        return update(timestamp: sample.timestamp, acceleration: a, rotationRate: sample.rotationRate)
    }

    /// Resolves the unresolved fall — `confirmed` or `dismissed` by an operator, or any resolution — at `time` (s on
    /// the sample clock); nil when no fall awaits a resolution (none was reported, or it was already resolved).
    package mutating func resolve(_ resolution: FallDetectionEvent.Resolution, at time: Double) -> FallDetectionEvent? {
        guard let fall = unresolvedFall else { return nil }
        unresolvedFall = nil
        return fall.resolved(resolution, at: time)
    }

    /// Takes over a fall an earlier run of the agent reported and did not resolve, its dates moved onto this run's
    /// sample clock: it gets its resolution as if it had been detected here — `rejected` after recovery activity,
    /// `unresponsive` when its response window (counted from its detection) ends, at once if it has already.
    package mutating func adopt(_ fall: FallDetectionEvent) {
        unresolvedFall = fall
        recoveryActivity = 0
    }

    @inline(__always)
    func slot(_ block: Int) -> Int { block & (Self.ringCapacity - 1) }

    /// The block `index` as kept in the ring: empty before the start and beyond the ring's reach.
    @inline(__always)
    func block(_ index: Int) -> MagnitudeBlock {
        index < 0 || index > current || current - index >= Self.ringCapacity ? .empty : blocks[slot(index)]
    }

    private mutating func restart(at t: Double, magnitude m: Double) {
        for i in blocks.indices { blocks[i] = .empty }
        origin = t
        current = 0
        started = true
        lastFallBlock = Int.min / 2
        baseline = m
        smoothedMagnitude = m
        lastTimestamp = t
    }

    /// Block `c` is complete: count its activity towards an unresolved fall, then judge the candidate whose
    /// windows it completes.
    private mutating func close(block c: Int, at t: Double, into out: inout Update) {
        let b = blocks[slot(c)]
        if unresolvedFall != nil, b.count > 0 {
            let moving = b.sumActivity / Double(b.count) > settings.activityAccelerationG
            let turning =
                b.rotationCount > 0
                && b.sumRotationRate / Double(b.rotationCount) > settings.activityRotationRateRadPerS
            if moving || turning {
                recoveryActivity += Self.blockSeconds
                if recoveryActivity >= settings.recoveryActivitySeconds - 1e-9, let fall = unresolvedFall {
                    out.resolution = fall.resolved(.rejected, at: t)
                    unresolvedFall = nil
                }
            }
        }
        let k = c - (Self.after.upperBound - 1)
        guard k >= 0, k > lastFallBlock + Self.after.upperBound - 1, let candidate = features(ofCandidate: k) else {
            return
        }
        lastCandidate = candidate
        guard let fall = judge(candidate, at: t) else { return }
        if let earlier = unresolvedFall {
            // A second fall after the first was reported: the wearer moved in between, so the first is resolved.
            out.resolution = earlier.resolved(.rejected, at: t)
        }
        unresolvedFall = fall
        recoveryActivity = 0
        lastFallBlock = k
        out.fall = fall
    }
}
