import MotionModel

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Accelerometer-only gaits built to break a step counter: double-peaked steps, hard heel impacts, any
/// mounting (upside down, sideways), a bag swinging at its own pendulum rate, a walk after a long still
/// period, cadences from a slow stroll to a sprint — with the true number of footfalls.
///
/// Per step, the body's vertical specific force (g, about 1 g) is the walking bounce at the step rate plus
/// optional pulses: a heel impact (a 30 ms raised cosine of `heelImpact` g at the strike) and the two humps
/// of an M-shaped ground reaction (raised cosines 0.3 of a step wide: `strikeHump` g at the strike and
/// `secondPeak` g at `secondPeakPhase` of the step; with little bounce these make |a| peak twice a step). Alternate steps differ by `asymmetry` (a phone in one pocket feels its own leg's strike more),
/// and the thigh (or bag) tilts the device so gravity's direction in device axes moves at the stride rate.
/// Cadence wanders by `cadenceJitter` (relative, per step) so no two steps are identical. The bag is a
/// pendulum hanging `bagLength` below the shoulder, swinging ±`bagSwing` rad at its own frequency: the
/// device feels the string tension `cos θ + L θ̇²/g` along the string, tilted by θ. With `pocket` set, the
/// device rides a trouser pocket on a swinging thigh instead (`ThighPocket`: the whole kinematic chain, its
/// own mount; `up` and `tilt` are then unused).
///
/// Core Motion's sign: at rest the reading is −up (gravity), in g.
package struct GaitStressSignal: Sendable {
    package var cadence: Double
    /// Amplitude of the walking bounce, g (≈ 0.2–0.5 walking, ≈ 1 running).
    package var bounce: Double
    package var heelImpact = 0.0
    package var strikeHump = 0.0
    package var secondPeak = 0.0
    package var secondPeakPhase = 0.5
    package var asymmetry = 0.0
    /// Stride-rate tilt of the device (thigh swing), rad.
    package var tilt = 0.0
    /// Device axes of "up" at rest (any unit vector: (0, 0, −1) is upside down).
    package var up = Vector3(0, 0, 1)
    package var bagFrequency = 0.0
    package var bagSwing = 0.0
    /// Pendulum length, m; `bagFrequency` sets it (L = g / (2πf)²).
    package var bagLength: Double { bagFrequency > 0 ? standardGravity / pow(2 * Double.pi * bagFrequency, 2) : 0 }
    /// A trouser pocket on the thigh of the leg that strikes at even steps (nil: `up` and `tilt` place the
    /// device).
    package var pocket: ThighPocket?
    package var cadenceJitter = 0.02
    /// Uneven steps: this leg's steps last `1 − timingAsymmetry`, the other's `1 + timingAsymmetry` of the mean
    /// step (the Oxford validation back-pocket walk's foot switches alternate 0.48 and 0.69 s: about 0.18).
    package var timingAsymmetry = 0.0
    /// Sensor noise, g rms per axis.
    package var noise = 0.01
    package var rate = 100.0

    package init(cadence: Double, bounce: Double) {
        self.cadence = cadence
        self.bounce = bounce
    }

    /// A deterministic generator (64-bit LCG, Knuth's constants): tests never depend on a seed's luck.
    struct Noise {
        var state: UInt64
        mutating func uniform() -> Double {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Double(state >> 11) / Double(1 << 53)
        }
        mutating func normal() -> Double { (uniform() + uniform() + uniform() + uniform() - 2) * 3.0.squareRoot() }
    }

    /// `still` seconds at rest, `walk` seconds of gait, `after` seconds at rest; the samples and the number
    /// of footfalls during the walk.
    package func samples(
        still: Double,
        walk: Double,
        after: Double = 3,
        seed: UInt64 = 1
    ) -> (
        samples: [IMUSample], steps: Int
    ) {
        var rng = Noise(state: seed)
        let side = up.cross(abs(up.x) < 0.9 ? Vector3(1, 0, 0) : Vector3(0, 1, 0)).normalized
        let forward = side.cross(up)
        var out: [IMUSample] = []
        out.reserveCapacity(Int((still + walk + after) * rate) + 1)
        let dt = 1 / rate
        let total = still + walk + after
        var phase = 0.0  // steps since the walk began
        var stepCadence = cadence
        var steps = 0
        var t = 0.0
        var bagAngle = 0.0
        while t < total {
            var vertical = 0.0  // g above 1 g, along up
            var tiltAngle = 0.0
            let walking = t >= still && t < still + walk
            if walking {
                let previous = phase
                phase += stepCadence * dt
                if Int(phase) > Int(previous) || previous == 0 {
                    steps += 1
                    let uneven = Int(phase) % 2 == 0 ? 1 / (1 - timingAsymmetry) : 1 / (1 + timingAsymmetry)
                    stepCadence = cadence * uneven * (1 + cadenceJitter * rng.normal())
                }
                let u = phase - phase.rounded(.down)  // within the step, 0 at the strike
                let own = Int(phase) % 2 == 0
                let leg = own ? 1 + asymmetry : 1 - asymmetry
                // A pocket feels its own leg's strike through the femur, the other's through the pelvis.
                let impact = own ? heelImpact : heelImpact * (pocket?.contralateralImpact ?? 1)
                // The bounce peaks shortly after the strike.
                vertical += leg * bounce * cos(2 * Double.pi * (u - 0.1))
                vertical += leg * impact * Self.pulse(u / stepCadence, width: 0.03)
                let hump = 0.3 / stepCadence
                let near = u > 0.5 ? u - 1 : u
                vertical += leg * strikeHump * (Self.pulse((near - 0.05) / stepCadence, width: hump) - 0.15)
                let d = (u - secondPeakPhase) / stepCadence
                vertical += leg * secondPeak * (Self.pulse(d, width: hump) - 0.15)
                tiltAngle = tilt * cos(Double.pi * phase)
            }
            var a = -(1 + vertical) * up
            if tiltAngle != 0 { a = Self.rotate(a, about: side, by: tiltAngle) }
            if let pocket {
                // In stride after one step; back at rest over the last one. (The ramp's own rate of change
                // is left out of the thigh's motion: it matters for one step at each end.)
                let envelope = walking ? min(1, phase, (still + walk - t) * cadence) : 0
                a = pocket.reading(
                    at: t,
                    vertical: vertical,
                    stride: walking ? (phase / 2, stepCadence / 2) : nil,
                    envelope: max(0, envelope)
                )
            }
            if bagFrequency > 0 {
                // Pendulum: the device hangs along the string, tilted by θ about the forward axis.
                let w = 2 * Double.pi * bagFrequency
                bagAngle = bagSwing * sin(w * t)
                let rate = bagSwing * w * cos(w * t)
                let along = (1 + vertical) * cos(bagAngle) + bagLength * rate * rate / standardGravity
                a = Self.rotate(-along * up, about: forward, by: bagAngle)
            }
            a += Vector3(noise * rng.normal(), noise * rng.normal(), noise * rng.normal())
            out.append(IMUSample(timestamp: t, acceleration: a))
            t += dt
        }
        return (out, steps)
    }

    /// A raised cosine of unit height and total width `width` s centred at 0, `d` s from its centre.
    static func pulse(_ d: Double, width: Double) -> Double {
        abs(d) < width / 2 ? 0.5 * (1 + cos(2 * Double.pi * d / width)) : 0
    }

    /// Rodrigues' rotation of `v` about the unit axis `k` by `angle` rad.
    static func rotate(_ v: Vector3, about k: Vector3, by angle: Double) -> Vector3 {
        let c = cos(angle)
        let s = sin(angle)
        return c * v + s * k.cross(v) + (1 - c) * k.dot(v) * k
    }
}
