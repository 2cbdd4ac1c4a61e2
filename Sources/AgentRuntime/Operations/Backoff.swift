/// Jittered exponential back-off for reconnects: the n-th wait is uniformly drawn from a window that grows
/// with d = min(cap, base·2ⁿ), so a fleet that lost the same broker does not come back in lockstep.
package struct Backoff: Sendable {
    package enum Jitter: String, Sendable, Equatable, CaseIterable {
        /// [½·d, d]: never sooner than half the window, so the first retries of a fleet still bunch up.
        case equal
        /// [0, d] ("full jitter", Brooker 2015): the widest spread of a fleet's attempts over the window.
        case full
    }

    package let base: Double
    package let cap: Double
    package let jitter: Jitter
    package private(set) var attempt = 0
    private var random: SplitMix64

    package init(base: Double, cap: Double, seed: UInt64, jitter: Jitter = .equal) {
        self.base = max(0.01, base)
        self.cap = max(self.base, cap)
        self.jitter = jitter
        random = SplitMix64(seed: seed)
    }

    /// A uniform draw in [0, 1), for choices that share the back-off's seed (the first server).
    package mutating func unit() -> Double { Double(random.next() >> 11) / Double(1 << 53) }

    /// The next wait, seconds.
    package mutating func next() -> Double {
        let exponent = min(attempt, 30)
        attempt += 1
        let d = min(cap, base * Double(1 << exponent))
        let unit = unit()
        switch jitter {
        case .equal: return d * (0.5 + 0.5 * unit)
        case .full: return d * unit
        }
    }

    package mutating func reset() { attempt = 0 }
}

/// A tiny seeded generator (Steele, Lea & Flood 2014) for jitter; not for cryptography.
package struct SplitMix64: Sendable {
    private var state: UInt64
    package init(seed: UInt64) { state = seed }
    package mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
