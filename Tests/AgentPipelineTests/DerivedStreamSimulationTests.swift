import AgentConfig
import AgentPipeline
import AgentPorts
import Foundation
import MotionModel
import MotionWire
import Simulation
import Testing

/// The estimator streams on the simulator's ground truth, through the same hub and encoders as the live agent.
@Suite struct DerivedStreamSimulationTests {
    struct Run {
        var messages: [(topic: Int, json: [String: Any])]
        var truth: SimulationTruth
        /// Truth altitude at each 50 Hz sample, m.
        var altitudes: [Double]
    }

    private func run(
        _ scenario: SimulationScenario,
        seconds: Double,
        streams: [any MotionStream],
        rates: [SensorType: Double]
    ) -> Run {
        let outbox = Outbox(capacityBytes: 64 << 20, capacityMessages: 1 << 20)
        let hub = SensorHub(outbox: outbox)
        for (i, s) in streams.enumerated() { s.configure(settings: s.settings, sensorRatesHz: rates, topicID: i) }
        hub.setStreams(streams)
        var recording = SimulatedRecording(
            imu: SimulatedIMU(scenario: scenario, seed: 5),
            rateHz: 50,
            duration: seconds
        )
        var truth: SimulationTruth?
        var altitudes: [Double] = []
        while let (sample, t) = recording.next() {
            hub.ingest(sample)
            truth = t
            altitudes.append(t.altitude)
        }
        var messages: [(Int, [String: Any])] = []
        while outbox.withOldest(
            timeout: 0,
            { m in
                messages.append(
                    (m.topicID, (try? JSONSerialization.jsonObject(with: Data(m.payload)) as? [String: Any]) ?? [:])
                )
                return .published
            }
        ) {}
        return Run(messages: messages, truth: truth!, altitudes: altitudes)
    }

    private let all: [SensorType: Double] = [.accelerometer: 50, .gyroscope: 50, .magnetometer: 50, .barometer: 50]

    @Test(arguments: [SimulationScenario.walking, .running])
    func stepsMatchTheSimulatedFootStrikes(scenario: SimulationScenario) {
        let pedometer = PedometerStream(
            settings: StreamSettings(enabled: true, rateHz: 1, qos: 1, retain: true),
            userHeightM: 1.75,
            eventsTopicID: 1
        )
        let r = run(scenario, seconds: 90, streams: [pedometer], rates: all)
        let counted = r.messages.last { $0.topic == 0 }?.json["numberOfSteps"] as? Int ?? -1
        let truth = r.truth.steps
        #expect(truth > 100)
        #expect(abs(Double(counted - truth)) <= 0.05 * Double(truth), "\(scenario): counted \(counted), truth \(truth)")
        #expect(r.messages.contains { $0.topic == 1 && $0.json["type"] as? String == "resume" }, "a resume event")
    }

    @Test func noStepsWhileStationaryOrDriving() {
        for scenario in [SimulationScenario.stationary, .driving] {
            let pedometer = PedometerStream(
                settings: StreamSettings(enabled: true, rateHz: 1, qos: 1, retain: true),
                userHeightM: 1.75,
                eventsTopicID: 1
            )
            let r = run(scenario, seconds: 120, streams: [pedometer], rates: all)
            let counted = r.messages.last { $0.topic == 0 }?.json["numberOfSteps"] as? Int ?? -1
            #expect(counted <= 2, "\(scenario): \(counted) steps")
        }
    }

    @Test func floorsOnStairsAndNoneInTheLift() {
        let pedometer = PedometerStream(
            settings: StreamSettings(enabled: true, rateHz: 1, qos: 1, retain: true),
            userHeightM: 1.75,
            eventsTopicID: 1
        )
        // stairs-up: climbs 4 floors, then rides the lift down (the simulator's script).
        let r = run(.stairsUp, seconds: 150, streams: [pedometer], rates: all)
        let last = r.messages.last { $0.topic == 0 }?.json ?? [:]
        let ascended = last["floorsAscended"] as? Int ?? -1
        let descended = last["floorsDescended"] as? Int ?? -1
        #expect(abs(ascended - r.truth.floorsAscended) <= 1, "ascended \(ascended), truth \(r.truth.floorsAscended)")
        #expect(
            descended == r.truth.floorsDescended,
            "the lift ride counts no floors: \(descended) vs \(r.truth.floorsDescended)"
        )
    }

    @Test func altimeterFollowsTheStairs() {
        let altimeter = AltimeterStream(
            settings: StreamSettings(enabled: true, rateHz: 1, qos: 0, retain: false),
            seaLevelPressureKPa: 101.325,
            absoluteTopicID: 1
        )
        let r = run(.stairsUp, seconds: 60, streams: [altimeter], rates: all)
        // The altimeter smooths pressure (seconds), so it trails a climb: compare each reading with the truth
        // up to 3 s earlier and take the closest — shape and scale must match, a short lag is allowed.
        var worst = 0.0
        for m in r.messages where m.topic == 0 {
            guard let t = m.json["timestamp"] as? Double, let h = m.json["relativeAltitude"] as? Double, t > 5 else {
                continue
            }
            let i = Int((t * 50).rounded())
            let candidates = stride(from: max(0, i - 150), through: min(r.altitudes.count - 1, i), by: 5)
                .map { abs(h - (r.altitudes[$0] - r.altitudes[0])) }
            worst = max(worst, candidates.min() ?? .infinity)
        }
        #expect(worst < 0.6, "relative altitude strays \(worst) m from the truth")
        #expect(r.truth.altitude - r.altitudes[0] > 9, "the scenario climbed")
        let absolute = r.messages.filter { $0.topic == 1 }.last?.json["altitude"] as? Double ?? .nan
        #expect(
            abs(absolute - r.truth.altitude) < 15,
            "absolute \(absolute) m vs \(r.truth.altitude) m (ISA, weather drift)"
        )
    }

    @Test func activityTellsWalkingFromDriving() {
        for (scenario, flag) in [
            (SimulationScenario.walking, "walking"), (.running, "running"), (.driving, "automotive"),
            (.stationary, "stationary"),
        ] {
            let activity = ActivityStream(settings: StreamSettings(enabled: true, rateHz: 1, qos: 1, retain: true))
            let r = run(scenario, seconds: 60, streams: [activity], rates: all)
            let last = r.messages.last?.json ?? [:]
            #expect(last[flag] as? Bool == true, "\(scenario): \(last)")
        }
    }

    @Test func pedometerAndActivityShareOneDetector() {
        // Both streams read one detector: it runs once per sample (a second run of the same sample would be
        // a zero interval, which restarts its filters), so the shared count equals the pedometer's and the
        // activity follows the same walk.
        let gait = SharedGait()
        let settings = StreamSettings(enabled: true, rateHz: 1, qos: 1, retain: true)
        let pedometer = PedometerStream(settings: settings, userHeightM: 1.75, eventsTopicID: 2, gait: gait)
        let activity = ActivityStream(settings: settings, gait: gait)
        let r = run(.walking, seconds: 90, streams: [pedometer, activity], rates: all)
        let counted = r.messages.last { $0.topic == 0 }?.json["numberOfSteps"] as? Int ?? -1
        #expect(pedometer.pedometer.numberOfSteps == gait.stepCount)
        #expect(
            abs(Double(counted - r.truth.steps)) <= 0.05 * Double(r.truth.steps),
            "counted \(counted) of \(r.truth.steps)"
        )
        let last = r.messages.last { $0.topic == 1 }?.json ?? [:]
        #expect(last["walking"] as? Bool == true, "\(last)")
    }
}
