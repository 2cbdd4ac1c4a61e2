import MotionModel

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A small, fast, deterministic generator: xoshiro256** (Blackman & Vigna, "Scrambled linear
/// pseudorandom number generators", ACM TOMS 2021) seeded through SplitMix64, with Gaussian deviates by the
/// Box–Muller transform (the second deviate of each pair is kept for the next call).
///
/// A value type without allocation: the simulator keeps one per noise process, so which sensors are
/// requested never changes another sensor's noise sequence.
struct RandomSource: Sendable {
    private var s0: UInt64
    private var s1: UInt64
    private var s2: UInt64
    private var s3: UInt64
    private var spare: Double = 0
    private var hasSpare = false

    /// A generator for `seed`, separated from other streams of the same seed by `stream`.
    init(seed: UInt64, stream: UInt64) {
        var state = seed ^ (stream &* 0xD1B5_4A32_D192_ED03)
        s0 = RandomSource.splitMix64(&state)
        s1 = RandomSource.splitMix64(&state)
        s2 = RandomSource.splitMix64(&state)
        s3 = RandomSource.splitMix64(&state)
        if s0 | s1 | s2 | s3 == 0 { s0 = 1 }
    }

    private static func splitMix64(_ state: inout UInt64) -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    @inline(__always)
    private static func rotl(_ x: UInt64, _ k: UInt64) -> UInt64 { (x << k) | (x >> (64 - k)) }

    @inline(__always)
    mutating func nextUInt64() -> UInt64 {
        let result = RandomSource.rotl(s1 &* 5, 7) &* 9
        let t = s1 << 17
        s2 ^= s0
        s3 ^= s1
        s1 ^= s2
        s0 ^= s3
        s2 ^= t
        s3 = RandomSource.rotl(s3, 45)
        return result
    }

    /// Uniform on [0, 1) with 53 random bits.
    @inline(__always)
    mutating func uniform() -> Double {
        Double(nextUInt64() >> 11) * 0x1.0p-53
    }

    /// Uniform on [a, b).
    @inline(__always)
    mutating func uniform(_ a: Double, _ b: Double) -> Double { a + (b - a) * uniform() }

    /// Standard normal.
    @inline(__always)
    mutating func gaussian() -> Double {
        if hasSpare {
            hasSpare = false
            return spare
        }
        // 1 − u is in (0, 1], so the logarithm is finite.
        let u1 = 1 - uniform()
        let u2 = uniform()
        let r = (-2 * log(u1)).squareRoot()
        let theta = 2 * Double.pi * u2
        spare = r * sin(theta)
        hasSpare = true
        return r * cos(theta)
    }

    /// Three independent standard normals.
    @inline(__always)
    mutating func gaussianVector() -> Vector3 { Vector3(gaussian(), gaussian(), gaussian()) }
}
