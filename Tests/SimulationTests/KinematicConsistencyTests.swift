import MotionModel
import Testing

@testable import Simulation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The truth must be physics, not a collection of plausible curves: its acceleration is the derivative
/// of its velocity, its vertical velocity the derivative of its altitude, and its angular rate the
/// derivative of its attitude — checked by central differences at random instants of every scenario —
/// and the world state is continuous where segments meet.
@Suite struct KinematicConsistencyTests {
    private static func probeTimes(_ scenario: SimulationScenario, count: Int) -> [Double] {
        let period = MotionScript(scenario: scenario, options: SimulationOptions(), seed: 1).period
        let span = period.isFinite ? period * 1.1 : 600
        var random = RandomSource(seed: 77, stream: 1)
        return (0..<count).map { _ in random.uniform(0.01, span) }.sorted()
    }

    @Test(arguments: SimulationScenario.allCases)
    func derivativesAgreeWithFiniteDifferences(scenario: SimulationScenario) {
        var imu = SimulatedIMU(scenario: scenario, seed: 1, errors: .ideal)
        let h = 1e-4
        var previousSteps = 0
        var checked = 0
        var lastTime = -1.0
        for t in KinematicConsistencyTests.probeTimes(scenario, count: 300) where t - h > lastTime {
            lastTime = t + h
            _ = imu.sample(at: t - h, sensors: [])
            let before = imu.truth
            _ = imu.sample(at: t, sensors: [])
            let now = imu.truth
            _ = imu.sample(at: t + h, sensors: [])
            let after = imu.truth

            let acceleration = (after.velocity - before.velocity) / (2 * h)
            #expect(
                (acceleration - now.acceleration).norm < 2e-3 + 1e-4 * now.acceleration.norm,
                "\(scenario.rawValue) t=\(t): a \(now.acceleration) vs Δv/Δt \(acceleration)"
            )
            let climb = (after.altitude - before.altitude) / (2 * h)
            #expect(
                abs(climb - now.velocity.z) < 1e-4 + 1e-4 * abs(now.velocity.z),
                "\(scenario.rawValue) t=\(t): climb"
            )

            var delta = before.attitude.conjugate * after.attitude
            if delta.w < 0 { delta = Quaternion(w: -delta.w, x: -delta.x, y: -delta.y, z: -delta.z) }
            let vector = Vector3(delta.x, delta.y, delta.z)
            let angle = 2 * atan2(vector.norm, delta.w)
            let rate = vector.norm > 0 ? vector.normalized * (angle / (2 * h)) : .zero
            #expect(
                (rate - now.rotationRate).norm < 1e-3 + 1e-4 * now.rotationRate.norm,
                "\(scenario.rawValue) t=\(t): ω \(now.rotationRate) vs Δq/Δt \(rate)"
            )
            #expect(now.steps >= previousSteps)
            previousSteps = now.steps
            #expect(now.attitude.isFinite && now.acceleration.isFinite && abs(now.attitude.norm - 1) < 1e-9)
            checked += 1
        }
        #expect(checked > 250)
    }

    @Test(arguments: [SimulationScenario.mixedDay, .stairsUp, .stairsDown, .cycling, .driving, .rotating])
    func stateIsContinuousWhereSegmentsMeet(scenario: SimulationScenario) {
        let script = MotionScript(scenario: scenario, options: SimulationOptions(), seed: 1)
        var boundaries = script.segments.dropFirst().map(\.start)
        boundaries.append(script.period)  // the loop wraps around
        let e = 1e-7
        for boundary in boundaries {
            var cursor = 0
            let a = script.evaluate(at: boundary - e, cursor: &cursor)
            let b = script.evaluate(at: boundary + e, cursor: &cursor)
            let where_ = "\(scenario.rawValue) at \(boundary) s"
            #expect(a.frame.attitude.angle(to: b.frame.attitude) < 1e-5, "attitude jumps \(where_)")
            #expect(abs(a.frame.altitude - b.frame.altitude) < 1e-6, "altitude jumps \(where_)")
            #expect((a.frame.velocity - b.frame.velocity).norm < 1e-5, "velocity jumps \(where_)")
            #expect((a.frame.acceleration - b.frame.acceleration).norm < 1e-3, "acceleration jumps \(where_)")
            #expect((a.frame.angularVelocity - b.frame.angularVelocity).norm < 1e-4, "rate jumps \(where_)")
            #expect(b.steps >= a.steps && b.steps - a.steps <= 1)
        }
    }

    @Test func mixedDayVisitsEveryActivityAndClosesItsLoop() {
        let script = MotionScript(scenario: .mixedDay, options: SimulationOptions(), seed: 1)
        #expect(script.period > 600 && script.period < 1800)
        #expect(script.segments.contains { $0.isTransition })
        var activities = Set<SimulationActivity>()
        var scenarios = Set<SimulationScenario>()
        var cursor = 0
        var t = 0.0
        while t < script.period {
            let state = script.evaluate(at: t, cursor: &cursor)
            activities.insert(state.activity)
            scenarios.insert(state.scenario)
            t += 0.5
        }
        #expect(activities == Set(SimulationActivity.allCases))
        #expect(
            scenarios.isSuperset(of: [.stationary, .walking, .running, .stairsUp, .stairsDown, .cycling, .driving])
        )
        // Up two floors and down two: the second loop starts at the same altitude.
        var c0 = 0
        var c1 = 0
        let first = script.evaluate(at: 1, cursor: &c0)
        let second = script.evaluate(at: script.period + 1, cursor: &c1)
        #expect(abs(first.frame.altitude - second.frame.altitude) < 1e-9)
        #expect(second.steps > first.steps)
        #expect(second.floorsAscended == 2 && second.floorsDescended == 2)
    }

    @Test func vehiclesStopAndTurn() {
        for scenario in [SimulationScenario.driving, .cycling] {
            var run = SimulatedRecording(
                imu: SimulatedIMU(scenario: scenario, seed: 2, errors: .ideal),
                rateHz: 10,
                duration: 200,
                sensors: []
            )
            var maxSpeed = 0.0
            var stops = 0
            var moving = false
            var maxAcceleration = 0.0
            while let (_, truth) = run.next() {
                maxSpeed = max(maxSpeed, truth.speed)
                if truth.speed > 0.5 { moving = true }
                if moving, truth.speed < 0.01 {
                    stops += 1
                    moving = false
                }
                maxAcceleration = max(maxAcceleration, truth.acceleration.norm)
                #expect(truth.steps == 0)
                #expect(truth.activity == (scenario == .driving ? .automotive : .cycling))
            }
            #expect(stops >= 2, "\(scenario.rawValue) stops")
            #expect(abs(maxSpeed - (scenario == .driving ? 13.9 : 5.5)) < 0.01)
            if scenario == .driving {
                // Ordinary town driving: below 0.5 g with turns and vibration (the pedalling thigh of the
                // cyclist swings the phone harder than the bicycle accelerates).
                #expect(maxAcceleration < 0.5 * standardGravity)
            }
        }
    }
}
