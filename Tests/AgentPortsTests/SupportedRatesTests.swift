import AgentPorts
import Testing

/// Rate clamping as Core Motion clamps update intervals: the lowest supported rate that serves a request.
struct SupportedRatesTests {
    @Test(arguments: [
        (SupportedRates.list([12.5, 25, 50]), 1.0, 12.5),
        (SupportedRates.list([12.5, 25, 50]), 25.0, 25),
        (SupportedRates.list([12.5, 25, 50]), 26.0, 50),
        (SupportedRates.list([12.5, 25, 50]), 80.0, 50),
        (SupportedRates.range(min: 1, step: 0.5, max: 10), 3.2, 3.5),
        (SupportedRates.range(min: 1, step: 0, max: 10), 3.2, 3.2),
        (SupportedRates.range(min: 1, step: 1, max: 10), 0.1, 1),
    ])
    func supportedRatesPickTheLowestSufficient(rates: SupportedRates, requested: Double, expected: Double) {
        #expect(abs(rates.lowest(atLeast: requested) - expected) < 1e-9)
    }

    @Test func topicsAreBuiltFromTheRootWithoutTrailingSlashes() {
        let topics = TopicScheme(root: "motion/dev-1//")
        #expect(topics.stream(.deviceMotion) == "motion/dev-1/device-motion")
        #expect(topics.status == "motion/dev-1/status")
        #expect(topics.controlReply == "motion/dev-1/control/reply")
    }
}
