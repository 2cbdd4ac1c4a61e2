import MotionModel

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Deterministic synthetic accelerometer signals for the pedometer tests (independent of the Simulation module).
struct PedometerSyntheticMotion {
    /// A tiny deterministic generator (64-bit LCG, Knuth's constants) so tests never depend on a seed's luck.
    struct Noise {
        var state: UInt64
        mutating func uniform() -> Double {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Double(state >> 11) / Double(1 << 53)
        }
        /// Approximately normal (sum of 4 uniforms, scaled to unit variance).
        mutating func normal() -> Double {
            (uniform() + uniform() + uniform() + uniform() - 2) * 3.0.squareRoot()
        }
    }

    /// The "up" axis of a device held at an arbitrary tilt, in device axes.
    static let up = Vector3(0.3, -0.5, 0.81).normalized
    static let side = up.cross(Vector3(1, 0, 0)).normalized

    /// Walking or running: per step a vertical bounce (a raised-cosine impact of `amplitude` g lasting 40 %
    /// of the step) and a lateral sway at half the cadence, plus 0.01 g noise. Core Motion sign: at rest the
    /// reading is −up (gravity).
    static func walk(
        from start: Double,
        duration: Double,
        cadence: Double,
        amplitude: Double,
        rate: Double = 100,
        up: Vector3 = up,
        noise: inout Noise
    ) -> [IMUSample] {
        let side = up.cross(abs(up.x) < 0.9 ? Vector3(1, 0, 0) : Vector3(0, 1, 0)).normalized
        var out: [IMUSample] = []
        let n = Int(duration * rate)
        for i in 0..<n {
            let t = Double(i) / rate
            let phase = (t * cadence).truncatingRemainder(dividingBy: 1)
            let bump = phase < 0.4 ? amplitude * 0.5 * (1 - cos(2 * Double.pi * phase / 0.4)) : -amplitude * 0.27
            let sway = 0.3 * amplitude * sin(Double.pi * cadence * t)
            let a =
                -(1 + bump) * up + sway * side
                + Vector3(0.01 * noise.normal(), 0.01 * noise.normal(), 0.01 * noise.normal())
            out.append(IMUSample(timestamp: start + t, acceleration: a))
        }
        return out
    }

    /// Steps a walk of `duration` s at `cadence` contains (one per started step period).
    static func steps(duration: Double, cadence: Double) -> Int { Int((duration * cadence).rounded(.up)) }

    /// At rest with 0.005 g noise.
    static func still(from start: Double, duration: Double, rate: Double = 100, noise: inout Noise) -> [IMUSample] {
        (0..<Int(duration * rate)).map { i in
            IMUSample(
                timestamp: start + Double(i) / rate,
                acceleration: -1 * up + Vector3(0.005 * noise.normal(), 0.005 * noise.normal(), 0.005 * noise.normal())
            )
        }
    }
}
