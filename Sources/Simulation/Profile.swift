/// Smooth (C²) building blocks for starting and stopping motion without jerks that a real body or vehicle
/// could not produce: Perlin's quintic "smootherstep" and its integral.
///
/// Every scenario segment starts and ends at rest by scaling its motion with these, so segments can be
/// chained (mixed-day) with continuous position, velocity and acceleration.
enum Profile {
    /// `6x⁵ − 15x⁴ + 10x³` on [0, 1], 0 below and 1 above: value, slope and curvature all continuous.
    @inline(__always)
    static func smootherstep(_ x: Jet) -> Jet {
        let u = x.v
        if u <= 0 { return Jet(0) }
        if u >= 1 { return Jet(1) }
        let u2 = u * u
        let f = u2 * u * (10 + u * (-15 + 6 * u))
        let f1 = 30 * u2 * (1 - u) * (1 - u)
        let f2 = 60 * u * (1 - u) * (1 - 2 * u)
        return x.composed(value: f, slope: f1, curvature: f2)
    }

    /// `∫₀ˣ smootherstep = x⁶ − 3x⁵ + 2.5x⁴` on [0, 1]; continues linearly (slope 1) above 1.
    @inline(__always)
    static func smootherstepIntegral(_ x: Jet) -> Jet {
        let u = x.v
        if u <= 0 { return Jet(0) }
        if u >= 1 { return x.composed(value: u - 0.5, slope: 1, curvature: 0) }
        let u2 = u * u
        let f = u2 * u2 * (2.5 + u * (-3 + u))
        let f1 = u2 * u * (10 + u * (-15 + 6 * u))
        let f2 = 30 * u2 * (1 - u) * (1 - u)
        return x.composed(value: f, slope: f1, curvature: f2)
    }

    /// A plateau window on [0, length]: rises from 0 to 1 over `ramp`, holds 1, falls back to 0 over the
    /// last `ramp`. `length = .infinity` never falls; `ramp = 0` is a plain box.
    @inline(__always)
    static func window(_ t: Jet, length: Double, ramp: Double) -> Jet {
        guard ramp > 0 else { return Jet((t.v >= 0 && t.v <= length) ? 1 : 0) }
        let up = smootherstep(t * (1 / ramp))
        guard length.isFinite else { return up }
        let down = smootherstep((Jet(length) - t) * (1 / ramp))
        return up.v < down.v ? up : down
    }

    /// `∫₀ᵗ window`: the "progress" of something whose rate follows `window`. Reaches `length − ramp` at
    /// `t = length`.
    @inline(__always)
    static func windowIntegral(_ t: Jet, length: Double, ramp: Double) -> Jet {
        guard ramp > 0 else {
            let c = min(max(t.v, 0), length)
            return Jet(c, (t.v >= 0 && t.v <= length) ? t.d : 0, (t.v >= 0 && t.v <= length) ? t.dd : 0)
        }
        if !length.isFinite || t.v <= length - ramp {
            return smootherstepIntegral(t * (1 / ramp)) * ramp
        }
        // Falling edge, by symmetry: total − ∫ of the mirrored rising edge from t to the end.
        let total = length - ramp
        return Jet(total) - smootherstepIntegral((Jet(length) - t) * (1 / ramp)) * ramp
    }
}
