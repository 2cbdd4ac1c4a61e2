import ArgumentParser
import Foundation
import MotionEstimation
import MotionModel

/// Step-count accuracy of the shipped pedometer on the Oxford step-counter walks, against the authors' own
/// count per walk (`stats.csv`: what anyone comparing pedometers on this set uses) and against the foot
/// switches' contacts cleaned by one rule (`FootSwitchTruth`: a diagnostic of where the switches chatter or miss).
struct StepAccuracy: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "steps",
        abstract: "Counts steps on every walk of the Oxford step-counter set with the shipped defaults; prints a table."
    )

    @Option(
        help:
            "The folder of walks (one sub-folder each with accelerometer.csv and groundtruth_footswitch.csv; default $MOTION_AGENT_DATA/steps)."
    )
    var data: String?

    @Option(help: "Which walks, in name order: all, even (0, 2, 4…: the half the defaults were tuned on) or odd.")
    var walks = "all"

    @Option(
        help: "Decimate each walk to this rate first (Hz; 0 keeps the recorded ~400/200 Hz; the agent runs at 50)."
    )
    var rate = 0.0

    @Option(
        name: .customLong("set"),
        help: "Override a detector setting for a tuning run, e.g. --set thresholdFactor=0.5 (repeatable)."
    )
    var overrides: [String] = []

    @Option(help: "Write, per walk, <folder>/<walk>.csv with the counted steps and both truths over time.")
    var trace: String?

    struct Walk {
        var name: String
        var samples: [IMUSample]
        var truth: FootSwitchTruth
        /// The authors' step count (`stats.csv`).
        var authors: Int
    }

    /// |error| figures of a set of walks against one truth.
    struct Summary {
        var errors: [Double] = []
        var mean: Double { errors.isEmpty ? 0 : errors.map(abs).reduce(0, +) / Double(errors.count) }
        var worst: Double { errors.map(abs).max() ?? 0 }
        var text: String { String(format: "mean |error| %.2f %%, worst %.2f %%", mean, worst) }
    }

    func run() throws {
        let root = URL(fileURLWithPath: try DataSets.path(data, "steps", set: .steps))
        let names = try FileManager.default.contentsOfDirectory(atPath: root.path)
            .filter {
                FileManager.default.fileExists(atPath: root.appendingPathComponent($0 + "/accelerometer.csv").path)
            }
            .sorted()
        guard !names.isEmpty else {
            throw ValidationError("no walks under \(root.path) — pass --data with the folder of the Oxford step set")
        }
        let settings = try Self.settings(overrides)
        let authors = try Self.authorsCounts(root.appendingPathComponent("stats.csv"))
        let chosen = names.enumerated().filter { i, _ in
            walks == "all" || (walks == "even" && i % 2 == 0) || (walks == "odd" && i % 2 == 1)
        }
        guard !chosen.isEmpty else { throw ValidationError("--walks must be all, even or odd") }
        var label = overrides.isEmpty ? "shipped defaults" : "defaults with " + overrides.joined(separator: ", ")
        if rate > 0 { label += String(format: ", decimated to %.0f Hz", rate) }
        print(
            "Step counting, Oxford step-counter walks (Salvi et al., EMBC 2018; CC-BY-4.0), \(label), walks: \(walks)"
        )
        print("truth: authors = the authors' count (stats.csv); raw = rising edges of both foot switches;")
        print("       cleaned = feet alternate: a same-foot contact")
        print(
            String(
                format:
                    "< %.1f s after the previous one is chatter (dropped), ≤ %.1f s a missed other-foot contact (added)",
                FootSwitchTruth.chatterInterval,
                FootSwitchTruth.strideInterval
            )
        )
        print(
            "#  walk                                counted  authors  error %    raw  dropped added  cleaned  error %"
        )
        // [all, even, odd] × [authors, cleaned]
        var summaries = Array(repeating: (Summary(), Summary()), count: 3)
        var totals = (counted: 0, authors: 0, raw: 0, cleaned: 0)
        for (index, name) in chosen {
            guard let authorsCount = authors[name] else {
                throw ValidationError("\(name) is not in \(root.path)/stats.csv — fetch the set's stats.csv with it")
            }
            let walk = try Self.load(root.appendingPathComponent(name), name: name, authors: authorsCount)
            let steps = Self.steps(Self.decimate(walk.samples, to: rate), settings: settings)
            let counted = steps.reduce(0) { $0 + $1.steps }
            let cleaned = walk.truth.cleaned.count
            let error = 100 * Double(counted - walk.authors) / Double(walk.authors)
            let cleanedError = 100 * Double(counted - cleaned) / Double(cleaned)
            for k in [0, 1 + index % 2] {
                summaries[k].0.errors.append(error)
                summaries[k].1.errors.append(cleanedError)
            }
            totals.counted += counted
            totals.authors += walk.authors
            totals.raw += walk.truth.raw.count
            totals.cleaned += cleaned
            print(
                String(format: "%d  ", index) + name.padding(toLength: 34, withPad: " ", startingAt: 0)
                    + String(
                        format: " %7d  %7d  %+7.2f  %5d  %7d %5d  %7d  %+7.2f",
                        counted,
                        walk.authors,
                        error,
                        walk.truth.raw.count,
                        walk.truth.dropped,
                        walk.truth.added,
                        cleaned,
                        cleanedError
                    )
            )
            if let trace { try Self.writeTrace(steps, walk, to: URL(fileURLWithPath: trace)) }
        }
        print(
            "   total".padding(toLength: 37, withPad: " ", startingAt: 0)
                + String(
                    format: " %7d  %7d  %+7.2f  %5d                %7d  %+7.2f",
                    totals.counted,
                    totals.authors,
                    100 * Double(totals.counted - totals.authors) / Double(max(totals.authors, 1)),
                    totals.raw,
                    totals.cleaned,
                    100 * Double(totals.counted - totals.cleaned) / Double(max(totals.cleaned, 1))
                )
        )
        for (k, title) in ["all walks", "even walks (0, 2, 4…)", "odd walks (1, 3, 5…)"].enumerated()
        where !summaries[k].0.errors.isEmpty {
            print("\(title): authors' count \(summaries[k].0.text); cleaned truth \(summaries[k].1.text)")
        }
        print("issue 31 targets, against the authors' count: every walk within 5 %, mean |error| ≤ 1 %")
        print("anchors: windowed peak detection < 3 % (Brajdic & Harle, UbiComp 2013); Oxford app ≈ 95 % accuracy;")
        print("         a phone's hardware step counter on similar walks ≈ 1 %")
    }

    /// Steps the pedometer added at one sample, with the detector's state after it.
    struct Counted {
        var time: Double
        var steps: Int
        /// The step period the detector then followed, s.
        var period: Double
        /// Normalised autocorrelation of the step signal after one step period and after half of one.
        var stepCorrelation: Double
        var halfStepCorrelation: Double
    }

    /// `kind,time_s,steps,period_s,r_step,r_half` rows: `counted` (steps the pedometer added at that sample,
    /// the step period it followed and the autocorrelations behind it), `raw` and `cleaned` (one foot contact
    /// each). The authors' count has no times; on the walks of this set it equals the number of `raw` rows.
    static func writeTrace(_ steps: [Counted], _ walk: Walk, to folder: URL) throws {
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        var text = "kind,time_s,steps,period_s,r_step,r_half\n"
        for c in steps {
            text += String(
                format: "counted,%.4f,%d,%.4f,%.3f,%.3f\n",
                c.time,
                c.steps,
                c.period,
                c.stepCorrelation,
                c.halfStepCorrelation
            )
        }
        for t in walk.truth.raw { text += String(format: "raw,%.4f,1,,,\n", t) }
        for t in walk.truth.cleaned { text += String(format: "cleaned,%.4f,1,,,\n", t) }
        try text.write(to: folder.appendingPathComponent(walk.name + ".csv"), atomically: true, encoding: .utf8)
    }

    /// The first sample at or after each tick of `rate` Hz (all of them when `rate` is 0), as a sensor
    /// set to that rate delivers them.
    static func decimate(_ samples: [IMUSample], to rate: Double) -> [IMUSample] {
        guard rate > 0 else { return samples }
        var out: [IMUSample] = []
        var next = -Double.infinity
        for s in samples where s.timestamp >= next {
            out.append(s)
            next = (next.isFinite ? next : s.timestamp) + 1 / rate
        }
        return out
    }

    /// Runs the shipped pedometer over a walk and returns its step count.
    static func count(_ samples: [IMUSample], settings: StepDetector.Settings = .defaults) -> Int {
        steps(samples, settings: settings).reduce(0) { $0 + $1.steps }
    }

    /// Runs the shipped pedometer over a walk: the samples that added steps, with how many.
    static func steps(_ samples: [IMUSample], settings: StepDetector.Settings = .defaults) -> [Counted] {
        var pedometerSettings = Pedometer.Settings.defaults
        pedometerSettings.stepDetector = settings
        var pedometer = Pedometer(settings: pedometerSettings)
        var out: [Counted] = []
        for sample in samples {
            let before = pedometer.numberOfSteps
            pedometer.update(sample)
            guard pedometer.numberOfSteps > before else { continue }
            let period = pedometer.gait.stepPeriod
            out.append(
                Counted(
                    time: sample.timestamp,
                    steps: pedometer.numberOfSteps - before,
                    period: period,
                    stepCorrelation: pedometer.detector.autocorrelation(lag: period),
                    halfStepCorrelation: pedometer.detector.autocorrelation(lag: period / 2)
                )
            )
        }
        return out
    }

    /// Reads one walk: Android specific force in m/s² becomes Core Motion's g (`−a / 9.80665`); truth is
    /// the foot switches' contacts, raw and cleaned (`FootSwitchTruth`).
    static func load(_ folder: URL, name: String, authors: Int) throws -> Walk {
        let acc = try String(contentsOf: folder.appendingPathComponent("accelerometer.csv"), encoding: .utf8)
        var samples: [IMUSample] = []
        var origin: Int64?
        for line in acc.split(whereSeparator: \.isNewline).dropFirst() {
            let f = line.split(separator: ",")
            guard f.count >= 5, let ns = Int64(f[0]), let x = Double(f[2]), let y = Double(f[3]),
                let z = Double(f[4])
            else { continue }
            let t0 = origin ?? ns
            origin = t0
            let a = Vector3(x, y, z) / -standardGravity
            samples.append(IMUSample(timestamp: Double(ns - t0) * 1e-9, acceleration: a))
        }
        let gt = try String(contentsOf: folder.appendingPathComponent("groundtruth_footswitch.csv"), encoding: .utf8)
        var truth = FootSwitchTruth()
        for line in gt.split(whereSeparator: \.isNewline).dropFirst() {
            let f = line.split(separator: ",")
            guard f.count >= 3, let ns = Int64(f[0]), let a = Int(f[1]), let b = Int(f[2]) else { continue }
            truth.add(time: Double(ns - (origin ?? ns)) * 1e-9, a: a, b: b)
        }
        return Walk(name: name, samples: samples, truth: truth, authors: authors)
    }

    /// The authors' step count per walk folder, from the set's `stats.csv`
    /// (`#dir, user, phone, position, surface, duration(s), steps`).
    static func authorsCounts(_ file: URL) throws -> [String: Int] {
        guard let text = try? String(contentsOf: file, encoding: .utf8) else {
            throw ValidationError(
                "cannot read \(file.path): the authors' step counts — fetch the set's stats.csv beside the walks"
            )
        }
        var counts: [String: Int] = [:]
        for line in text.split(whereSeparator: \.isNewline) where !line.hasPrefix("#") {
            let f = line.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
            guard f.count >= 7, let steps = Int(f[6]) else { continue }
            counts[f[0]] = steps
        }
        return counts
    }

    /// The shipped detector settings with `name=value` overrides applied.
    static func settings(_ overrides: [String]) throws -> StepDetector.Settings {
        var s = StepDetector.Settings.defaults
        for o in overrides {
            let kv = o.split(separator: "=", maxSplits: 1)
            guard kv.count == 2, let v = Double(kv[1]) else {
                throw ValidationError("--set \(o): expected name=number")
            }
            switch kv[0] {
            case "lowPassCutoff": s.lowPassCutoff = v
            case "thresholdFactor": s.thresholdFactor = v
            case "minimumThreshold": s.minimumThreshold = v
            case "rearmFraction": s.rearmFraction = v
            case "minimumStepInterval": s.minimumStepInterval = v
            case "adaptiveIntervalFraction": s.adaptiveIntervalFraction = v
            case "maximumStepInterval": s.maximumStepInterval = v
            case "confirmationSteps": s.confirmationSteps = Int(v)
            case "maximumIntervalRatio": s.maximumIntervalRatio = v
            case "stopTimeout": s.stopTimeout = v
            case "minimumVerticalFraction": s.minimumVerticalFraction = v
            case "minimumStrideRegularity": s.minimumStrideRegularity = v
            case "regularityWindow": s.regularityWindow = v
            case "missedStepLow": s.missedStepRatio = v...max(v, s.missedStepRatio.upperBound)
            case "missedStepHigh": s.missedStepRatio = min(v, s.missedStepRatio.lowerBound)...v
            default: throw ValidationError("--set \(o): unknown setting \(kv[0])")
            }
        }
        return s
    }
}
