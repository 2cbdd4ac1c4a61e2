/// The recent step signal (the detector's filtered acceleration magnitude) resampled at a fixed rate, and
/// its normalised autocorrelation: how much the motion repeats itself after one step, after one stride.
///
/// It also keeps the acceleration across gravity (two horizontal components in device axes): the thigh's
/// swing tilts a pocketed phone, and the body sways sideways, both once per stride — so that signal tells a
/// stride from a step where the magnitude cannot.
///
/// It also decides how many threshold crossings make one step. A foot strike can give the magnitude two
/// bumps (heel strike and push-off, or a pocket that knocks twice), so crossings may come at twice the step
/// rate; the crossings alone cannot tell a fast gait from a slow one with double peaks. The stride can: a
/// signal whose crossings come every `P` s is a gait at `1/P` steps/s only if it also repeats after `P`
/// (one step). Real walks in every placement of the Oxford set repeat after a step (median r ≥ 0.19) and
/// are anti-correlated after half a step (median r −0.4…−0.9): the fundamental dominates. When the signal
/// after `P` looks nothing like itself (r below `harmonicCorrelation`) while after `2P` it does (r at least
/// the stride regularity), `P` is half a step and the step is `2P` — within walking cadences only. When the
/// magnitude repeats after both `P` and `2P` (two nearly equal bumps a step, or a pocketed phone that feels
/// one leg's strike more than the other's — the same shape in |a|), the horizontal signal decides: it
/// repeats after a stride and not after a step, so `2P` is a step when the horizontal signal does not
/// repeat after `2P` but does after `4P`, and `P` is a step when it repeats after `2P`.
///
/// Fixed capacity, allocated once: `record` and `autocorrelation` allocate nothing.
package struct GaitPeriodicity: Sendable {
    /// Resampling rate of the history, Hz (the signal is low-passed at 3 Hz before it comes here).
    package static let rate = 50.0

    private var history: ContiguousArray<Double>
    private var horizontal1: ContiguousArray<Double>
    private var horizontal2: ContiguousArray<Double>
    private var next = 0
    private var filled = 0
    private var nextTime = -Double.infinity
    // The previous sample, for interpolating onto the fixed-rate grid.
    private var previousTime = -Double.infinity
    private var previous = (0.0, 0.0, 0.0)

    /// - Parameter window: how much signal the autocorrelation looks at, s.
    package init(window: Double) {
        history = ContiguousArray(repeating: 0, count: max(Int(window * Self.rate), 16))
        horizontal1 = history
        horizontal2 = history
    }

    /// Forgets the signal (after a gap in the samples).
    package mutating func restart(at time: Double) {
        filled = 0
        nextTime = time
        previousTime = -.infinity
    }

    /// Offers one filtered sample (the magnitude's and the two horizontal components'). The history is
    /// interpolated onto an exact `rate` grid whatever the input rate and its jitter: lags are in seconds,
    /// and a history that kept "the first sample after each tick" of a jittery 50 Hz stream would hold
    /// anything between 25 and 50 samples a second and read its lags wrong by up to 2×.
    package mutating func record(_ value: Double, horizontal: (Double, Double) = (0, 0), at time: Double) {
        let current = (value, horizontal.0, horizontal.1)
        defer {
            previousTime = time
            previous = current
        }
        guard previousTime.isFinite, time > previousTime else {
            if !previousTime.isFinite { nextTime = time }
            return
        }
        let span = time - previousTime
        while nextTime <= time {
            let w = max(0, min(1, (nextTime - previousTime) / span))
            history[next] = previous.0 + w * (current.0 - previous.0)
            horizontal1[next] = previous.1 + w * (current.1 - previous.1)
            horizontal2[next] = previous.2 + w * (current.2 - previous.2)
            next = (next + 1) % history.count
            filled = min(filled + 1, history.count)
            nextTime += 1 / Self.rate
        }
    }

    /// Normalised autocorrelation of the recent magnitude signal at a lag in s (−1…1; 0 without enough
    /// signal).
    package func autocorrelation(lag seconds: Double) -> Double {
        let (xy, xx, yy) = Self.products(history, lag: seconds, next: next, filled: filled)
        let d = (xx * yy).squareRoot()
        return d > 0 ? xy / d : 0
    }

    /// Normalised autocorrelation of the recent horizontal acceleration (both components) at a lag in s.
    package func horizontalAutocorrelation(lag seconds: Double) -> Double {
        let a = Self.products(horizontal1, lag: seconds, next: next, filled: filled)
        let b = Self.products(horizontal2, lag: seconds, next: next, filled: filled)
        let d = ((a.1 + b.1) * (a.2 + b.2)).squareRoot()
        return d > 0 ? (a.0 + b.0) / d : 0
    }

    /// Σ x(t)·x(t−lag), Σ x(t)², Σ x(t−lag)² over the overlap (zeros without enough signal).
    private static func products(
        _ ring: ContiguousArray<Double>,
        lag seconds: Double,
        next: Int,
        filled: Int
    ) -> (Double, Double, Double) {
        let lag = Int((seconds * rate).rounded())
        let n = filled - lag
        guard lag > 0, n >= lag / 2 else { return (0, 0, 0) }
        var xy = 0.0
        var xx = 0.0
        var yy = 0.0
        let count = ring.count
        // The newest sample sits just before `next`.
        for i in 0..<n {
            let a = ring[(next - 1 - i + 2 * count) % count]
            let b = ring[(next - 1 - i - lag + 2 * count) % count]
            xy += a * b
            xx += a * a
            yy += b * b
        }
        return (xy, xx, yy)
    }

    /// The larger of the autocorrelations at one step and at one stride: a phone on the body's midline
    /// repeats every step, one in a trouser pocket or a swinging hand only every stride.
    package func regularity(stepPeriod: Double) -> Double {
        max(autocorrelation(lag: stepPeriod), autocorrelation(lag: 2 * stepPeriod))
    }

    /// The step period behind crossings that come every `period` s: `period` itself, or twice it when the
    /// signal repeats after two crossings but not after one (a double-peaked step).
    /// - Parameters:
    ///   - longestStep: the slowest step considered, s (a double of the crossings' period beyond it is
    ///     not a gait).
    ///   - harmonicCorrelation: below this autocorrelation at `period`, one crossing is not a step.
    ///   - strideRegularity: the autocorrelation at `2 × period` needed to call it a double-peaked step.
    package func stepPeriod(
        crossingPeriod period: Double,
        longestStep: Double,
        harmonicCorrelation: Double,
        strideRegularity: Double
    ) -> Double {
        guard period > 0, 2 * period <= longestStep else { return period }
        let two = autocorrelation(lag: 2 * period)
        guard two >= strideRegularity else { return period }
        if autocorrelation(lag: period) < harmonicCorrelation { return 2 * period }
        let stride = horizontalAutocorrelation(lag: 4 * period)
        let step = horizontalAutocorrelation(lag: 2 * period)
        return stride >= strideRegularity && step < stride - 0.5 ? 2 * period : period
    }
}
