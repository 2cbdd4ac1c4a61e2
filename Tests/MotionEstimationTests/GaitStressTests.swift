import Foundation
import MotionEstimation
import MotionModel
import Simulation
import TestSupport
import Testing

/// Gaits built to break a step counter (`GaitStressSignal`) and real walks made harder (turned over, after
/// a long rest, faster): the count within 5 % of the footfalls, and the activity walking or running for
/// at least 95 % of the walking time. The detector runs once per sample for the pedometer and the activity,
/// as in the agent.
@Suite("Gait stress")
struct GaitStressTests {
    struct Outcome {
        var steps: Int
        /// Share of the walk's time the activity said walking or running (back-dated to the walk's first step).
        var activeShare: Double
        var runningSeen: Bool
    }

    /// Runs the shared detector, the pedometer and the activity over `samples`; the walk is [start, end).
    static func run(_ samples: [IMUSample], walk: Range<Double>) -> Outcome {
        var detector = StepDetector()
        var pedometer = Pedometer()
        var classifier = ActivityEstimator()
        var fusion = GaitActivityFusion()
        var activeSince: Double?
        var covered = 0.0
        var runningSeen = false
        func close(at t: Double) {
            guard let s = activeSince else { return }
            covered += max(0, min(t, walk.upperBound) - max(s, walk.lowerBound))
            activeSince = nil
        }
        for sample in samples {
            let reading = sample.acceleration.map { detector.read(timestamp: sample.timestamp, acceleration: $0) }
            pedometer.update(sample, gait: reading)
            _ = classifier.update(sample)
            guard let a = fusion.update(classifier: classifier.activity, gait: reading) else { continue }
            let active = a.walking || a.running
            runningSeen = runningSeen || a.running
            if active, activeSince == nil { activeSince = a.startDate }
            if !active { close(at: sample.timestamp) }
        }
        close(at: samples.last?.timestamp ?? 0)
        return Outcome(
            steps: pedometer.numberOfSteps,
            activeShare: covered / (walk.upperBound - walk.lowerBound),
            runningSeen: runningSeen
        )
    }

    static func check(_ name: String, _ signal: GaitStressSignal, still: Double = 5, walk: Double = 90) {
        let (samples, truth) = signal.samples(still: still, walk: walk)
        let o = run(samples, walk: still..<(still + walk))
        let error = Double(o.steps - truth) / Double(truth)
        #expect(
            abs(error) <= 0.05,
            "\(name): counted \(o.steps) of \(truth) (\(String(format: "%+.1f", 100 * error)) %)"
        )
        #expect(
            o.activeShare >= 0.95,
            "\(name): walking or running for \(String(format: "%.1f", 100 * o.activeShare)) % of the walk"
        )
        if signal.cadence < 2.3 {
            #expect(!o.runningSeen, "\(name): a walk at \(signal.cadence) steps/s reported as running")
        }
    }

    /// The walk of issue 19: upside down in a back pocket, 1.66 steps/s, a strong second peak in every step,
    /// |a| varying by about 0.5 g.
    @Test("double-peaked steps, upside down in a back pocket")
    func doublePeakBackPocket() {
        var s = GaitStressSignal(cadence: 1.66, bounce: 0.1)
        s.strikeHump = 1.0
        s.secondPeak = 0.9
        s.secondPeakPhase = 0.5
        s.heelImpact = 0.5
        s.asymmetry = 0.2
        s.tilt = 0.4
        s.up = Vector3(0, 0, -1)
        s.rate = 50
        Self.check("double peak, upside down", s, walk: 210)
    }

    @Test("double-peaked steps, uneven spacing", arguments: [(1.5, 0.35), (1.8, 0.4), (2.0, 0.6)])
    func doublePeakUneven(cadence: Double, phase: Double) {
        var s = GaitStressSignal(cadence: cadence, bounce: 0.1)
        s.strikeHump = 0.6
        s.secondPeak = 0.5
        s.secondPeakPhase = phase
        s.up = Vector3(0.3, -0.5, 0.81).normalized
        s.rate = 50
        Self.check("double peak at \(phase) of the step, \(cadence) steps/s", s)
    }

    @Test("hard heel impacts of 2–3 g", arguments: [(1.8, 2.0), (2.0, 3.0), (1.4, 2.5)])
    func heelImpacts(cadence: Double, impact: Double) {
        var s = GaitStressSignal(cadence: cadence, bounce: 0.3)
        s.heelImpact = impact
        s.rate = 100
        Self.check("heel impacts of \(impact) g at \(cadence) steps/s", s)
    }

    @Test(
        "any mounting: upside down, sideways, on edge",
        arguments: [Vector3(0, 0, -1), Vector3(1, 0, 0), Vector3(0, -1, 0), Vector3(-0.6, 0.6, -0.53)]
    )
    func mounting(up: Vector3) {
        var s = GaitStressSignal(cadence: 1.9, bounce: 0.3)
        s.up = up.normalized
        s.tilt = 0.35
        s.asymmetry = 0.25
        s.rate = 50
        Self.check("mounted with up = \(up)", s)
    }

    @Test("a bag swinging at its own rate", arguments: [(1.8, 0.7), (2.0, 0.9), (1.6, 0.55), (1.9, 1.0)])
    func swingingBag(cadence: Double, swing: Double) {
        var s = GaitStressSignal(cadence: cadence, bounce: 0.3)
        s.bagFrequency = swing
        s.bagSwing = 0.45
        s.rate = 50
        Self.check("bag swinging at \(swing) Hz, \(cadence) steps/s", s)
    }

    /// A front or back trouser pocket on a swinging thigh (`ThighPocket`: hip flexion +27°/−8° over the
    /// stride, the pocket leg's swing dip, its own strike felt fully and the other's a quarter to a half,
    /// a back pocket rocking and shifting in the cloth). `dip` is the stride-rate dip of |a| in the pocket
    /// leg's swing, g: 0.15 is about the Oxford front-pocket walks' (their one-step autocorrelation of |a|
    /// 0.45–0.7), 0.3 beyond any of them (autocorrelation after one step about −0.2: one step of every
    /// stride looks nothing like the other). The detector before issue 31 followed the strides of five of
    /// these nine (−50 %: only the pocket leg's strike crossed its threshold, and a crossing every 0.9–1.3 s
    /// passed for a step) and lost 9 % of a sixth to late starts.
    @Test(
        "a pocket on a swinging thigh, front and back",
        arguments: [
            (false, 1.5, 0.3, 0.15), (false, 1.7, 0.2, 0.15), (false, 1.9, 0.3, 0.3), (false, 2.1, 0.2, 0.15),
            (false, 2.1, 0.3, 0.3), (true, 1.5, 0.2, 0.15), (true, 1.7, 0.3, 0.3), (true, 1.9, 0.2, 0.15),
            (true, 2.1, 0.3, 0.3),
        ]
    )
    func thighPocket(back: Bool, cadence: Double, bounce: Double, dip: Double) {
        var s = GaitStressSignal(cadence: cadence, bounce: bounce)
        var pocket = back ? ThighPocket.back : ThighPocket.front
        pocket.swingDip = dip
        pocket.surge = 0.2
        pocket.contralateralImpact = back ? 0.5 : 0.25
        s.pocket = pocket
        s.heelImpact = 0.8
        s.rate = 50
        Self.check("\(back ? "back" : "front") pocket, \(cadence) steps/s, swing dip \(dip) g", s)
    }

    @Test("a back pocket upside down, loose in the cloth")
    func looseBackPocket() {
        var s = GaitStressSignal(cadence: 1.8, bounce: 0.25)
        var pocket = ThighPocket.back
        // Top edge down, screen backward; rocking ±9° and shifting its seat by ±17° over 23 s.
        pocket.mount = ThighPocket.mount(x: Vector3(0, 1, 0), y: Vector3(0, 0, -1))
        pocket.wobble = 0.15
        pocket.drift = 0.3
        pocket.swingDip = 0.2
        s.pocket = pocket
        s.heelImpact = 0.8
        s.rate = 50
        Self.check("back pocket upside down, loose", s, walk: 120)
    }

    /// A phone loose in a back pocket that knocks three or four times a stride (`ThighPocket.knocks`: −z 2.5 g
    /// after its own leg's strike, +y 2 g at the other's, +x 2.5 g and +y 1.5 g 0.3–0.4 of a stride later, the
    /// shape of the Oxford validation set's back-pocket walk of user 1), with steps of uneven length (that
    /// walk's foot switches alternate 0.48 and 0.69 s).
    @Test(
        "a back pocket knocking three or four times a stride, uneven steps",
        arguments: [(50.0, 0.18, UInt64(1)), (100.0, 0.18, 2), (50.0, 0.25, 1), (100.0, 0.0, 1)]
    )
    func knockingBackPocket(rate: Double, asymmetry: Double, seed: UInt64) {
        var s = GaitStressSignal(cadence: 1.72, bounce: 0.25)
        s.pocket = .loose(.back)
        s.heelImpact = 0.8
        s.rate = rate
        s.timingAsymmetry = asymmetry
        let (samples, truth) = s.samples(still: 5, walk: 180, seed: seed)
        let o = Self.run(samples, walk: 5..<185)
        let error = Double(o.steps - truth) / Double(truth)
        #expect(abs(error) <= 0.02, "counted \(o.steps) of \(truth) (\(String(format: "%+.1f", 100 * error)) %)")
        #expect(o.activeShare >= 0.95, "walking or running for \(String(format: "%.1f", 100 * o.activeShare)) %")
        #expect(!o.runningSeen, "a walk at 1.72 steps/s reported as running")
    }

    /// Three knocks a stride, the third 0.16 of a stride before the next own strike, so that one crossing a
    /// stride remains and which knock makes it wanders: strides read 1.0–1.34 s at 1.72 steps/s. The walk is
    /// followed on strides (two steps a crossing); before issue 41 a stride 15 % short counted one step, moved
    /// the period estimate by a fifth, and the next strides counted one step each or ended the walk: −11.1,
    /// −6.8 and −2.2 % at 1.5, 1.72 and 2.0 steps/s (50 Hz) — the size of the undercount issue 41 reports for
    /// that Oxford back-pocket walk (−6.4 %), whose recording is not here to check.
    @Test(
        "a back pocket whose one crossing a stride wanders between its knocks",
        arguments: [1.5, 1.72, 2.0]
    )
    func wanderingStrideCrossing(cadence: Double) {
        var s = GaitStressSignal(cadence: cadence, bounce: 0.15)
        s.pocket = .loose(
            .back,
            knocks: [
                .init(phase: 0.1, reading: Vector3(0, 0, -1.5)),
                .init(phase: 0.51, reading: Vector3(0, 2.5, 0)),
                .init(phase: 0.84, reading: Vector3(2, 0, -0.8)),
            ]
        )
        s.heelImpact = 0.3
        s.rate = 50
        s.timingAsymmetry = 0.15
        let (samples, truth) = s.samples(still: 5, walk: 180, seed: 1)
        let o = Self.run(samples, walk: 5..<185)
        let error = Double(o.steps - truth) / Double(truth)
        #expect(abs(error) <= 0.03, "counted \(o.steps) of \(truth) (\(String(format: "%+.1f", 100 * error)) %)")
        #expect(o.activeShare >= 0.95, "walking or running for \(String(format: "%.1f", 100 * o.activeShare)) %")
    }

    /// A loose phone knocking four times a stride in a front pocket (the knocks of the back pocket above), steps of
    /// uneven length: one crossing a step, but they alternate about 0.3 and 0.8 s — beyond the ratio a regular
    /// window allows (1.8), and only half the intervals single for the missed-crossing rule, so before issue 41's
    /// fix no walk was ever confirmed (0 steps at both rates). Two crossings a stride are two steps, however uneven.
    @Test(
        "a knocking pocket whose crossings alternate short and long",
        arguments: [(50.0, 1.8), (50.0, 2.1), (100.0, 1.8), (100.0, 2.1)]
    )
    func alternatingCrossings(rate: Double, cadence: Double) {
        var s = GaitStressSignal(cadence: cadence, bounce: 0.25)
        s.pocket = .loose(.front)
        s.heelImpact = 0.8
        s.rate = rate
        s.timingAsymmetry = 0.18
        Self.check("front pocket knocking, \(cadence) steps/s at \(rate) Hz", s, walk: 120)
    }

    @Test(
        "a sensor slower than the detector's 50 Hz, or jittery",
        arguments: [(40.0, 0.0), (50.0, 0.004), (25.0, 0.002)]
    )
    func irregularRate(rate: Double, jitter: Double) {
        // Round one resampled its autocorrelation history by keeping the first sample after each 20 ms tick:
        // at 40 Hz, or at a jittery 50 Hz, the history ran slow and every lag was read wrong.
        var s = GaitStressSignal(cadence: 1.8, bounce: 0.3)
        s.tilt = 0.35
        s.asymmetry = 0.25
        s.rate = rate
        var (samples, truth) = s.samples(still: 5, walk: 90)
        var noise = PedometerSyntheticMotion.Noise(state: 3)
        for i in samples.indices { samples[i].timestamp += jitter * (noise.uniform() - 0.5) }
        let o = Self.run(samples, walk: 5..<95)
        #expect(abs(Double(o.steps - truth)) <= 0.05 * Double(truth), "\(rate) Hz: counted \(o.steps) of \(truth)")
        #expect(o.activeShare >= 0.95, "\(rate) Hz: walking for \(o.activeShare) of the walk")
    }

    @Test("a walk's steps before its confirmation count once it is confirmed", arguments: [1.8, 2.2])
    func stepsBeforeConfirmation(cadence: Double) throws {
        // A walk from half a second after start, while the vertical share is still settling (here over 4 s,
        // so that several regular crossings come before the gate can open): the walk is confirmed on a window
        // of the last five crossings, and the count then jumps by every step so far, not by the window's five
        // (the count before issue 31).
        var s = GaitStressSignal(cadence: cadence, bounce: 0.3)
        s.rate = 50
        let still = 0.5
        let (samples, _) = s.samples(still: still, walk: 20)
        var settings = StepDetector.Settings.defaults
        settings.verticalTimeConstant = 4
        var detector = StepDetector(settings: settings)
        var confirmation: (time: Double, steps: Int)?
        for sample in samples {
            let u = detector.update(timestamp: sample.timestamp, acceleration: sample.acceleration!)
            if u.walkStarted != nil, confirmation == nil { confirmation = (sample.timestamp, u.newSteps) }
        }
        let c = try #require(confirmation)
        // Strikes at the walk's start and then every 1/cadence s (within its 2 % jitter).
        let made = Int(((c.time - still) * cadence).rounded(.down)) + 1
        #expect(c.steps > settings.confirmationSteps, "confirmed at \(c.time) s with \(c.steps) steps of \(made)")
        #expect(abs(c.steps - made) <= 1, "confirmed at \(c.time) s with \(c.steps) steps of \(made)")
    }

    @Test("a walk after ten minutes at rest")
    func afterLongRest() {
        var s = GaitStressSignal(cadence: 1.7, bounce: 0.25)
        s.rate = 50
        Self.check("after 600 s still", s, still: 600, walk: 60)
    }

    @Test(
        "cadence from 1.2 to 3.5 steps/s",
        arguments: [(1.2, 0.15), (1.5, 0.2), (2.0, 0.35), (2.5, 0.6), (3.0, 1.0), (3.5, 1.3)]
    )
    func cadences(cadence: Double, bounce: Double) {
        var s = GaitStressSignal(cadence: cadence, bounce: bounce)
        if cadence >= 2.5 { s.heelImpact = 1.5 }
        s.rate = 50
        Self.check("\(cadence) steps/s", s)
    }

    // MARK: - Real walks made harder

    /// An Oxford walk (Salvi et al., EMBC 2018, CC-BY-4.0) at 50 Hz, the agent's pedometer rate: Core Motion
    /// g (−a / 9.80665) and the foot-switch steps.
    static func oxfordWalk(_ name: String) throws -> (samples: [IMUSample], steps: Int, walk: ClosedRange<Double>) {
        // Committed at 50 Hz, picked as below (the first sample at or after every 20 ms tick), so picking again
        // keeps every row.
        let acc = try DataFixtures.text("steps/\(name)/accelerometer-50hz.csv")
        var samples: [IMUSample] = []
        var origin: Int64?
        var nextTime = 0.0
        for line in acc.split(whereSeparator: \.isNewline).dropFirst() {
            let f = line.split(separator: ",")
            guard f.count >= 5, let ns = Int64(f[0]), let x = Double(f[2]), let y = Double(f[3]), let z = Double(f[4])
            else { continue }
            let t0 = origin ?? ns
            origin = t0
            let t = Double(ns - t0) * 1e-9
            guard t >= nextTime else { continue }
            nextTime += 0.02
            samples.append(IMUSample(timestamp: t, acceleration: Vector3(x, y, z) / -standardGravity))
        }
        let gt = try DataFixtures.text("steps/\(name)/groundtruth_footswitch.csv")
        var truth = 0
        var previous: (Int, Int)?
        var firstStep = Double.infinity
        var lastStep = -Double.infinity
        for line in gt.split(whereSeparator: \.isNewline).dropFirst() {
            let f = line.split(separator: ",")
            guard f.count >= 3, let ns = Int64(f[0]), let a = Int(f[1]), let b = Int(f[2]) else { continue }
            if let q = previous {
                let edges = (q.0 == 0 && a == 1 ? 1 : 0) + (q.1 == 0 && b == 1 ? 1 : 0)
                truth += edges
                if edges > 0 {
                    let t = Double(ns - (origin ?? ns)) * 1e-9
                    firstStep = min(firstStep, t)
                    lastStep = max(lastStep, t)
                }
            }
            previous = (a, b)
        }
        return (samples, truth, firstStep...lastStep)
    }

    /// The walk turned by `turn`, played `speed` times faster (cadence × speed; the motion about the
    /// 1 s mean, which stands for gravity, scaled by speed²), after `still` seconds lying still.
    static func variant(
        _ walk: [IMUSample],
        turn: Quaternion,
        speed: Double,
        still: Double,
        steps: ClosedRange<Double>
    ) -> (samples: [IMUSample], walk: Range<Double>) {
        var out: [IMUSample] = []
        var noise = PedometerSyntheticMotion.Noise(state: 17)
        let first = turn.rotate(walk[0].acceleration!)
        var t = 0.0
        while t < still {
            let n = Vector3(noise.normal(), noise.normal(), noise.normal()) * 0.005
            out.append(IMUSample(timestamp: t, acceleration: first + n))
            t += 0.02
        }
        var mean = walk[0].acceleration!
        let start = walk[0].timestamp
        for s in walk {
            let a = s.acceleration!
            mean += (a - mean) * 0.02
            let scaled = mean + (a - mean) * (speed * speed)
            out.append(
                IMUSample(timestamp: still + 0.02 + (s.timestamp - start) / speed, acceleration: turn.rotate(scaled))
            )
        }
        let time = { (t: Double) in still + 0.02 + (t - start) / speed }
        return (out, time(steps.lowerBound)..<time(steps.upperBound))
    }

    @Test(
        "a real walk turned over, after a long rest, at other cadences",
        arguments: [
            ("Pixel_Jamie_Hard_BackPocket_1", 180.0, 1.0, 600.0),
            ("Pixel_Jamie_Hard_BackPocket_1", 90.0, 1.45, 30.0),
            ("Pixel_Jamie_Hard_FrontPocket_1", 90.0, 0.8, 30.0),
            ("Pixel_Jamie_Hard_InHand_1", 90.0, 1.0, 600.0),
        ]
    )
    func realWalkVariants(name: String, turnDegrees: Double, speed: Double, still: Double) throws {
        let (walk, truth, steps) = try Self.oxfordWalk(name)
        let turn = Quaternion(axis: Vector3(1, 0, 0), angle: turnDegrees * .pi / 180)
        let (samples, range) = Self.variant(walk, turn: turn, speed: speed, still: still, steps: steps)
        let o = Self.run(samples, walk: range)
        let error = Double(o.steps - truth) / Double(truth)
        #expect(abs(error) <= 0.05, "\(name) ×\(speed): counted \(o.steps) of \(truth)")
        #expect(o.activeShare >= 0.95, "\(name) ×\(speed): walking or running for \(o.activeShare) of the walk")
    }
}
