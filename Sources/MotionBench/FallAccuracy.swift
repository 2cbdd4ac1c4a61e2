import ArgumentParser
import CBenchSupport
import Foundation
import MotionEstimation
import MotionModel

/// Fall detection of the shipped `MotionEventDetector` on every SisFall trial, per trial: sensitivity (fall trials
/// with a fall event), specificity (daily-activity trials without one), the trials that failed per activity code,
/// and the latency from the impact to the event — at 200 Hz, decimated to 100 and 50 Hz, with and without the
/// gyroscope.
struct FallAccuracy: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "falls",
        abstract:
            "Runs the shipped fall detector on every SisFall trial at 200/100/50 Hz, with and without the gyroscope."
    )

    @Option(help: "The SisFall folder (SUBJECT/CODE_SUBJECT_RNN.csv.gz; default $MOTION_AGENT_DATA/falls/sisfall).")
    var data: String?

    @Flag(help: "Print every trial: its fall events per configuration and the first one's latency.")
    var trials = false

    @Option(help: "Explain one trial (e.g. F08_SA02_R04): every candidate impact judged, its features and score.")
    var explain: String?

    /// A rate and sensor set the detector is run with.
    struct Configuration {
        var rateHz: Int
        var gyroscope: Bool
        var step: Int { Int(SisFallTrial.rateHz) / rateHz }
        var label: String { "\(rateHz) Hz, \(gyroscope ? "with gyroscope" : "accelerometer only")" }
        var short: String { "\(rateHz)\(gyroscope ? "g" : "a")" }

        static let all = [200, 100, 50].flatMap { r in [true, false].map { Configuration(rateHz: r, gyroscope: $0) } }
    }

    /// What the detector said about one trial in one configuration.
    struct Outcome {
        var falls: [FallDetectionEvent] = []
        /// Seconds from the first fall's impact to its report.
        var latency: Double? { falls.first.map { $0.detectionDate - $0.date } }
    }

    /// Runs the shipped detector over a trial, every `step`-th sample from the first (as the agent's decimator
    /// picks them), sample n at n / 200 s.
    static func run(_ trial: SisFallTrial, _ c: Configuration) -> Outcome {
        var detector = MotionEventDetector()
        var outcome = Outcome()
        var n = 0
        while n < trial.acceleration.count {
            let events = detector.update(
                timestamp: Double(n) / SisFallTrial.rateHz,
                acceleration: trial.acceleration[n],
                rotationRate: c.gyroscope ? trial.rotationRate[n] : nil
            )
            if let f = events.fall { outcome.falls.append(f) }
            n += c.step
        }
        return outcome
    }

    func run() throws {
        let root = try DataSets.path(data, "falls/sisfall", set: .falls)
        if let explain { return try Self.explain(explain, root: root) }
        let all = try SisFallTrial.loadAll(root)
        let falls = all.filter(\.isFall).count
        let subjects = Set(all.map(\.subject)).sorted()
        print(
            "Falls, SisFall (Sucerquia, López, Vargas-Bonilla, \"SisFall: A Fall and Movement Dataset\", Sensors 17(1):198, 2017)"
        )
        print(
            "\(all.count) trials (\(falls) falls, \(all.count - falls) activities of daily living) of \(subjects.count) subjects: "
                + subjects.joined(separator: " ")
        )
        print(
            "the shipped detector (MotionEventDetector, FallScore.shipped), one parameter set for every configuration;"
        )
        print(
            "it was chosen by scripts/research/falls/tune_falls.py on all 14 subjects (SA01–SA08, SE01–SE06), so these"
        )
        print("are figures on its training subjects — the held-out (leave-one-subject-out) figures are that script's")
        print(
            "decimation: every 2nd / 4th sample from the first; a trial is a fall when the detector reports ≥ 1 fall\n"
        )

        var outcomes = [[Outcome]](repeating: [], count: Configuration.all.count)
        var nanoseconds = [Double](repeating: 0, count: Configuration.all.count)
        for (i, c) in Configuration.all.enumerated() {
            let start = bench_monotonic_ns()
            outcomes[i] = all.map { Self.run($0, c) }
            let samples = all.map { ($0.acceleration.count + c.step - 1) / c.step }.reduce(0, +)
            nanoseconds[i] = Double(bench_monotonic_ns() - start) / Double(max(samples, 1))
        }
        for (i, c) in Configuration.all.enumerated() {
            report(c, all, outcomes[i])
        }
        print(
            "\ncost, the whole MotionEventDetector per sample over every trial (falls, jogging, jumps: many candidates): "
                + zip(Configuration.all, nanoseconds).map { String(format: "%@ %.0f ns", $0.short, $1) }
                .joined(separator: ", ")
        )
        codeTable(all, outcomes)
        if trials { trialLines(all, outcomes) }
    }

    /// Every candidate the detector judges in one trial, per configuration: what decided it.
    static func explain(_ name: String, root: String) throws {
        let subject = name.split(separator: "_").dropFirst().first.map(String.init) ?? ""
        let base = (root as NSString).appendingPathComponent(subject + "/" + name)
        let path = FileManager.default.fileExists(atPath: base + ".csv.gz") ? base + ".csv.gz" : base + ".csv"
        let trial = try SisFallTrial.load(path)
        let settings = MotionEventDetector.Settings.defaults.fall
        print(
            "\(name): candidates judged (gates: orientation ≥ \(settings.minimumOrientationChangeDegrees)°, "
                + "stillness ≤ \(settings.maximumStillnessG) g; smoothed peak: |a| low-passed with "
                + "\(settings.peakTimeConstantSeconds) s; a fall when the score ≥ 0)"
        )
        for c in Configuration.all {
            print(c.label)
            var detector = MotionEventDetector()
            var last: FallDetector.Features?
            var n = 0
            while n < trial.acceleration.count {
                let t = Double(n) / SisFallTrial.rateHz
                let events = detector.update(
                    timestamp: t,
                    acceleration: trial.acceleration[n],
                    rotationRate: c.gyroscope ? trial.rotationRate[n] : nil
                )
                if let f = detector.fall.lastCandidate, f != last {
                    last = f
                    print(
                        String(
                            format:
                                "  impact %.3f s, judged %.3f s: peak %.4f g, smoothed %.4f g, orientation %.2f°, stillness %.4f g, energy %.5f g·s, rotation %@, score %.4f%@",
                            f.peakTime,
                            t,
                            f.peakG,
                            f.smoothedPeakG,
                            f.orientationChangeDegrees,
                            f.stillnessG,
                            f.energyGSeconds,
                            f.peakRotationRateRadPerS.map { String(format: "%.4f rad/s", $0) } ?? "-",
                            detector.fall.score(f),
                            events.fall != nil ? " → FALL" : ""
                        )
                    )
                }
                n += c.step
            }
        }
    }

    private func report(_ c: Configuration, _ all: [SisFallTrial], _ outcomes: [Outcome]) {
        var detected = 0
        var quiet = 0
        var latencies: [Double] = []
        var extra = 0
        for (t, o) in zip(all, outcomes) {
            if t.isFall {
                if !o.falls.isEmpty { detected += 1 }
                if o.falls.count > 1 { extra += 1 }
                if let l = o.latency { latencies.append(l) }
            } else if o.falls.isEmpty {
                quiet += 1
            }
        }
        let falls = all.filter(\.isFall).count
        let adl = all.count - falls
        let sorted = latencies.sorted()
        print(
            c.label.padding(toLength: 30, withPad: " ", startingAt: 0)
                + String(
                    format: "sensitivity %.2f %% (%d/%d)  specificity %.2f %% (%d/%d)",
                    100 * Double(detected) / Double(max(falls, 1)),
                    detected,
                    falls,
                    100 * Double(quiet) / Double(max(adl, 1)),
                    quiet,
                    adl
                )
        )
        let indent = "".padding(toLength: 30, withPad: " ", startingAt: 0)
        print(
            indent
                + String(
                    format: "latency impact → event: median %.3f s, 95th percentile %.3f s, max %.3f s (target ≤ 3 s)",
                    Statistics.median(sorted),
                    Statistics.percentile(sorted, 95),
                    sorted.last ?? .nan
                ) + (extra > 0 ? "; fall trials with more than one fall event: \(extra)" : "")
        )
        for (title, wrong) in [
            ("missed falls", zip(all, outcomes).filter { $0.0.isFall && $0.1.falls.isEmpty }.map(\.0)),
            ("ADL called falls", zip(all, outcomes).filter { !$0.0.isFall && !$0.1.falls.isEmpty }.map(\.0)),
        ] {
            let byCode = Dictionary(grouping: wrong, by: \.code).sorted { $0.key < $1.key }
            let text = byCode.map { code, ts in "\(code) \(ts.count) (\(ts.map(\.name).joined(separator: ", ")))" }
            print(indent + "\(title): " + (text.isEmpty ? "none" : ""))
            for line in text { print("".padding(toLength: 32, withPad: " ", startingAt: 0) + line) }
        }
    }

    /// Per activity code: its trials and how many each configuration got wrong.
    private func codeTable(_ all: [SisFallTrial], _ outcomes: [[Outcome]]) {
        print("\nTrials wrong per activity code (a fall missed, or an ADL called a fall):")
        print(
            "code  trials  "
                + Configuration.all.map { $0.short.padding(toLength: 6, withPad: " ", startingAt: 0) }
                .joined()
        )
        let codes = Set(all.map(\.code)).sorted()
        for code in codes {
            let idx = all.indices.filter { all[$0].code == code }
            var line = code.padding(toLength: 6, withPad: " ", startingAt: 0)
            line += String(idx.count).padding(toLength: 8, withPad: " ", startingAt: 0)
            for o in outcomes {
                let wrong = idx.filter { all[$0].isFall == o[$0].falls.isEmpty }.count
                line += String(wrong).padding(toLength: 6, withPad: " ", startingAt: 0)
            }
            print(line)
        }
    }

    private func trialLines(_ all: [SisFallTrial], _ outcomes: [[Outcome]]) {
        print("\nEvery trial: fall events per configuration (first one's impact time and latency, s):")
        for (i, t) in all.enumerated() {
            var line = t.name + (t.isFall ? " fall " : " ADL  ")
            for (j, c) in Configuration.all.enumerated() {
                let o = outcomes[j][i]
                line += " \(c.short):\(o.falls.count)"
                if let f = o.falls.first {
                    line += String(format: "@%.2f+%.2f", f.date, f.detectionDate - f.date)
                }
            }
            print(line)
        }
    }
}
