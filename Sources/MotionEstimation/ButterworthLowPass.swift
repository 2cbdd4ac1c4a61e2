import MotionModel

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Coefficients of VQF's second-order Butterworth low-pass (vqf.cpp `filterCoeffs`), for time constant
/// `tau` seconds at sample interval `interval` seconds.
struct LowPassCoefficients: Sendable, Equatable {
    var b0: Double, b1: Double, b2: Double
    var a1: Double, a2: Double
    /// Seconds; the averaging phase of `VectorLowPass` lasts this long.
    var tau: Double
    /// Seconds per sample these coefficients were computed for.
    var interval: Double

    init(tau: Double, interval: Double) {
        self.tau = tau
        self.interval = interval
        // Pass through when tau < Ts/2 (cut-off above 90 % of Nyquist), where the filter would be unstable.
        guard tau >= interval / 2 else {
            (b0, b1, b2, a1, a2) = (1, 0, 0, 0, 0)
            return
        }
        // fc is chosen so tau is the time constant of the non-oscillating part of the step response.
        let fc = (2.0.squareRoot() / (2 * Double.pi)) / tau
        let c = tan(Double.pi * fc * interval)
        let d = c * c + 2.0.squareRoot() * c + 1
        b0 = c * c / d
        b1 = 2 * b0
        b2 = b0
        a1 = 2 * (c * c - 1) / d
        a2 = (1 - 2.0.squareRoot() * c + c * c) / d
    }
}

/// VQF's vector low-pass (vqf.cpp `filterVec`) on three channels, with its start-up behaviour: for the
/// first `tau` seconds it outputs the running mean, then starts the filter in steady state at that mean,
/// so the output never depends on a single first sample.
struct VectorLowPass: Sendable, Equatable {
    private var s0 = Vector3.zero
    private var s1 = Vector3.zero
    private var count = 0.0
    private var sum = Vector3.zero
    private(set) var isRunning = false
    private(set) var output = Vector3.zero

    /// Back to the averaging phase (vqf.cpp sets the state to NaN).
    mutating func reset() {
        isRunning = false
        count = 0
        sum = .zero
    }

    @inline(__always)
    mutating func step(_ x: Vector3, _ c: LowPassCoefficients) -> Vector3 {
        guard isRunning else {
            count += 1
            sum += x
            output = sum / count
            if count * c.interval >= c.tau {
                // Steady state for input = output = mean (scipy.signal.lfilter_zi).
                s0 = output * (1 - c.b0)
                s1 = output * (c.b2 - c.a2)
                isRunning = true
            }
            return output
        }
        let y = c.b0 * x + s0
        s0 = c.b1 * x - c.a1 * y + s1
        s1 = c.b2 * x - c.a2 * y
        output = y
        return y
    }

    /// Keeps the output continuous when the coefficients change (vqf.cpp `filterAdaptStateForCoeffChange`).
    mutating func adapt(from old: LowPassCoefficients, to new: LowPassCoefficients) {
        guard isRunning else { return }
        s0 += output * (old.b0 - new.b0)
        s1 += output * (old.b1 - new.b1 - old.a1 + new.a1)
    }
}
