import Testing

@testable import AgentSimulation

/// The ledger's fingerprint set against the standard library's `Set` over the same values: every insert's
/// answer, the count and membership agree, through many growths, with 0 and colliding low bits among them.
@Suite struct FingerprintSetTests {
    @Test func agreesWithSet() {
        var set = FingerprintSet(capacity: 4)
        var reference = Set<UInt64>()
        // SplitMix64, seeded: the same values every run.
        var state: UInt64 = 0x1234_5678
        func next() -> UInt64 {
            state &+= 0x9e37_79b9_7f4a_7c15
            var z = state
            z = (z ^ (z >> 30)) &* 0xbf58_476d_1ce4_e5b9
            z = (z ^ (z >> 27)) &* 0x94d0_49bb_1331_11eb
            return z ^ (z >> 31)
        }
        var values: [UInt64] = [0, 1, UInt64.max, 1 << 63, 1 << 32]
        for index in 0..<20_000 { values.append(index % 3 == 0 ? UInt64(index) << 20 : next()) }
        values += values.prefix(5_000)
        var disagreements = 0
        for value in values where set.insert(value) != reference.insert(value).inserted { disagreements += 1 }
        #expect(disagreements == 0)
        #expect(set.count == reference.count)
        #expect(values.allSatisfy { set.contains($0) })
        let probes = (0..<5_000).map { _ in next() }
        #expect(probes.allSatisfy { set.contains($0) == reference.contains($0) })
        #expect(reference.count > 20_000)
    }
}
