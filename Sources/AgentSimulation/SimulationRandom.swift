/// The explorer's random numbers: SplitMix64 (Steele, Lea, Flood 2014), so a seed names one schedule on every
/// platform and every run.
package struct SimulationRandom: RandomNumberGenerator, Sendable {
    private var state: UInt64

    package init(seed: UInt64) { state = seed }

    package mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// Uniform in [0, 1).
    package mutating func unit() -> Double { Double(next() >> 11) / Double(1 << 53) }

    /// Uniform in `range`.
    package mutating func int(_ range: ClosedRange<Int>) -> Int { Int.random(in: range, using: &self) }

    /// Uniform in `range`.
    package mutating func double(_ range: ClosedRange<Double>) -> Double {
        range.lowerBound + unit() * (range.upperBound - range.lowerBound)
    }

    /// True with probability `p`.
    package mutating func chance(_ p: Double) -> Bool { unit() < p }

    package mutating func pick<T>(_ values: [T]) -> T { values[int(0...(values.count - 1))] }

    /// A seed of its own for a part of the schedule, so adding a draw in one part does not reshuffle another.
    package mutating func fork() -> SimulationRandom { SimulationRandom(seed: next()) }
}
