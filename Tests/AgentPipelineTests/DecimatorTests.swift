import AgentPipeline
import AgentPorts
import MotionWire
import Testing

@Suite struct DecimatorTests {
    /// Feeds `seconds` of samples at `hardwareHz` and counts what a `streamHz` stream publishes.
    private func published(streamHz: Double, hardwareHz: Double, seconds: Double, jitter: Double = 0) -> [Double] {
        var d = Decimator(rateHz: streamHz, hardwareRateHz: hardwareHz)
        var picked: [Double] = []
        let n = Int(seconds * hardwareHz)
        for i in 0..<n {
            // Deterministic jitter of ±jitter periods, as a real FIFO's timestamps show.
            let wobble = jitter * (Double((i * 7919) % 13) / 6 - 1)
            let t = 100 + (Double(i) + wobble) / hardwareHz
            if d.accept(t) { picked.append(t) }
        }
        return picked
    }

    @Test(arguments: [
        (50.0, 200.0), (60.0, 100.0), (100.0, 100.0), (1.0, 100.0), (33.0, 400.0), (12.5, 1600.0),
    ])
    func averageRateIsExactlyTheStreamRate(streamHz: Double, hardwareHz: Double) {
        let picked = published(streamHz: streamHz, hardwareHz: hardwareHz, seconds: 20)
        let expected = streamHz * 20
        #expect(abs(Double(picked.count) - expected) <= 1.0, "\(picked.count) vs \(expected)")
    }

    @Test func integerRatioPicksEveryNthSample() {
        let picked = published(streamHz: 50, hardwareHz: 200, seconds: 1)
        let gaps = zip(picked.dropFirst(), picked).map { $0 - $1 }
        #expect(gaps.allSatisfy { abs($0 - 0.02) < 1e-9 })
    }

    @Test func toleratesTimestampJitter() {
        let picked = published(streamHz: 50, hardwareHz: 200, seconds: 10, jitter: 0.3)
        #expect(abs(picked.count - 500) <= 1)
    }

    @Test func restartsAfterAGapInsteadOfBursting() {
        var d = Decimator(rateHz: 10, hardwareRateHz: 100)
        var count = 0
        for i in 0..<100 where d.accept(Double(i) / 100) { count += 1 }
        // 5 s without samples, then one more second.
        var afterGap: [Double] = []
        for i in 0..<100 {
            let t = 6 + Double(i) / 100
            if d.accept(t) { afterGap.append(t) }
        }
        #expect(count == 10)
        #expect(afterGap.count == 10)
        #expect(afterGap.first == 6)
    }
}
