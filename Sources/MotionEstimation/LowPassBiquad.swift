#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A second-order Butterworth low-pass whose coefficients follow the measured sample period, so one setting
/// in Hz works at 50, 100, 200 or 400 Hz and survives jitter. The period is smoothed and the coefficients
/// are recomputed only when it drifts by more than 2 %, so the per-sample cost is a handful of multiplies.
struct LowPassBiquad: Sendable {
    /// Cut-off frequency, Hz.
    let cutoff: Double
    private var period = 0.0
    private var designedPeriod = 0.0
    private var b0 = 1.0, b1 = 0.0, b2 = 0.0, a1 = 0.0, a2 = 0.0
    private var x1 = 0.0, x2 = 0.0, y1 = 0.0, y2 = 0.0
    private var primed = false

    init(cutoff: Double) {
        self.cutoff = cutoff
    }

    /// Filters one value taken `dt` seconds after the previous one.
    mutating func update(_ x: Double, dt: Double) -> Double {
        guard primed else {
            // Start at rest on the first value so the filter does not ring up from zero.
            primed = true
            period = dt
            design()
            x1 = x
            x2 = x
            y1 = x
            y2 = x
            return x
        }
        period += 0.01 * (dt - period)
        if abs(period - designedPeriod) > 0.02 * designedPeriod { design() }
        let y = b0 * x + b1 * x1 + b2 * x2 - a1 * y1 - a2 * y2
        x2 = x1
        x1 = x
        y2 = y1
        y1 = y
        return y
    }

    /// Bilinear-transform Butterworth (RBJ cookbook with Q = 1/√2), pre-warped at the cut-off.
    private mutating func design() {
        designedPeriod = period
        // Keep the cut-off below Nyquist whatever the rate.
        let k = tan(Double.pi * min(cutoff * period, 0.45))
        let q = 2.0.squareRoot()
        let n = 1 / (1 + k * q + k * k)
        b0 = k * k * n
        b1 = 2 * b0
        b2 = b0
        a1 = 2 * (k * k - 1) * n
        a2 = (1 - k * q + k * k) * n
    }
}
