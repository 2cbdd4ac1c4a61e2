#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A scalar function of time with its first two time derivatives (second-order forward-mode
/// differentiation).
///
/// The scenarios are written once as smooth functions of time in `Jet` arithmetic, so the velocity,
/// acceleration, angular rate and angular acceleration that the sensors see are the exact derivatives of
/// the positions and angles the truth reports; nothing is differentiated numerically.
struct Jet: Sendable {
    /// The value.
    var v: Double
    /// d/dt.
    var d: Double
    /// d²/dt².
    var dd: Double

    @inline(__always)
    init(_ v: Double, _ d: Double = 0, _ dd: Double = 0) {
        self.v = v
        self.d = d
        self.dd = dd
    }

    static let zero = Jet(0)

    /// The time itself: value `t`, rate 1.
    @inline(__always)
    static func time(_ t: Double) -> Jet { Jet(t, 1, 0) }

    @inline(__always)
    static func + (a: Jet, b: Jet) -> Jet { Jet(a.v + b.v, a.d + b.d, a.dd + b.dd) }
    @inline(__always)
    static func - (a: Jet, b: Jet) -> Jet { Jet(a.v - b.v, a.d - b.d, a.dd - b.dd) }
    @inline(__always)
    static prefix func - (a: Jet) -> Jet { Jet(-a.v, -a.d, -a.dd) }
    @inline(__always)
    static func + (a: Jet, s: Double) -> Jet { Jet(a.v + s, a.d, a.dd) }
    @inline(__always)
    static func * (a: Jet, s: Double) -> Jet { Jet(a.v * s, a.d * s, a.dd * s) }
    @inline(__always)
    static func * (s: Double, a: Jet) -> Jet { Jet(a.v * s, a.d * s, a.dd * s) }
    @inline(__always)
    static func * (a: Jet, b: Jet) -> Jet {
        Jet(a.v * b.v, a.d * b.v + a.v * b.d, a.dd * b.v + 2 * a.d * b.d + a.v * b.dd)
    }
    @inline(__always)
    static func += (a: inout Jet, b: Jet) { a = a + b }

    /// `f(self)` for a scalar function given by its value and first two derivatives at `self.v`
    /// (the chain rule to second order).
    @inline(__always)
    func composed(value f: Double, slope f1: Double, curvature f2: Double) -> Jet {
        Jet(f, f1 * d, f2 * d * d + f1 * dd)
    }

    @inline(__always)
    var sine: Jet {
        let s = sin(v)
        let c = cos(v)
        return composed(value: s, slope: c, curvature: -s)
    }

    @inline(__always)
    var cosine: Jet {
        let s = sin(v)
        let c = cos(v)
        return composed(value: c, slope: -s, curvature: -c)
    }
}
