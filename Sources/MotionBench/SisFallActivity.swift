import ArgumentParser
import Foundation
import MotionEstimation
import MotionModel

/// A check on people, a device and a placement the classifier never saw: SisFall (Sucerquia, López &
/// Vargas-Bonilla, Sensors 17(1):198, 2017), one device on the waist (belt buckle) at 200 Hz — walking,
/// jogging, stairs and gentle jumps of 8 young and 6 elderly people. Nothing of it is trained on; the shipped
/// model runs on it through the whole estimator and the gait, as in the agent.
enum SisFallActivity {
    /// The trials used, their Core Motion class (nil: none of them) and what they are.
    static let trials: [(code: String, truth: ActivityHeldOut.Truth, name: String)] = [
        ("D01", .walking, "walking slowly"),
        ("D02", .walking, "walking quickly"),
        ("D03", .running, "jogging slowly"),
        ("D04", .running, "jogging quickly"),
        ("D05", .walking, "stairs up and down, slowly"),
        ("D06", .walking, "stairs up and down, quickly"),
        ("D19", .none, "gentle jumps (reaching for something high)"),
    ]

    /// One trial's samples in the agent's units, read by `SisFallTrial` (the falls bench's reader).
    static func samples(_ url: URL) throws -> [IMUSample] {
        let trial = try SisFallTrial.load(url.path)
        return zip(trial.acceleration, trial.rotationRate).enumerated().map { n, sample in
            IMUSample(timestamp: Double(n) / SisFallTrial.rateHz, acceleration: sample.0, rotationRate: sample.1)
        }
    }

    static func run(folder: URL) throws {
        let subjects = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter {
            $0.hasPrefix("SA") || $0.hasPrefix("SE")
        }.sorted()
        guard !subjects.isEmpty else {
            throw ValidationError("no SA*/SE* folders under \(folder.path) — pass --sisfall with SisFall's folder")
        }
        print("")
        print(
            "Out of set: SisFall (Sucerquia et al. 2017), a waist device at 200 Hz, 8 young (SA) and 6 elderly (SE)"
                + " people; never trained on. The shipped model, with the gait, read once a second."
        )
        print(
            "  " + pad("trial", 46) + pad("group", 7) + pad("seconds", 9) + pad("right class", 13)
                + "reported (share of seconds), confidence above low"
        )
        for trial in trials {
            for group in ["SA", "SE"] {
                var reported = [ActivityHeldOut.Reported: Int]()
                var aboveLow = 0
                var total = 0
                for subject in subjects where subject.hasPrefix(group) {
                    let dir = folder.appendingPathComponent(subject)
                    let files = try FileManager.default.contentsOfDirectory(atPath: dir.path).filter {
                        $0.hasPrefix(trial.code + "_")
                    }.sorted()
                    for file in files {
                        for (r, confidence) in run(try samples(dir.appendingPathComponent(file))) {
                            reported[r, default: 0] += 1
                            if confidence > .low { aboveLow += 1 }
                            total += 1
                        }
                    }
                }
                guard total > 0 else { continue }
                let right =
                    trial.truth == .none
                    ? reported.filter { $0.key != .running && $0.key != .cycling }.values.reduce(0, +)
                    : reported[ActivityHeldOut.Reported(rawValue: trial.truth.rawValue)!, default: 0]
                var how = ""
                for c in ActivityHeldOut.Reported.allCases {
                    if let n = reported[c] {
                        how += String(format: "%@ %.0f %%  ", c.description, 100 * Double(n) / Double(total))
                    }
                }
                how += String(format: "| above low %.0f %%", 100 * Double(aboveLow) / Double(total))
                print(
                    "  " + pad("\(trial.code) \(trial.name)", 46) + pad(group, 7) + pad(String(total), 9)
                        + pad(String(format: "%.1f %%", 100 * Double(right) / Double(total)), 13) + how
                )
            }
        }
        print("  (for D19, right = neither running nor cycling)")
    }

    /// The fused activity once a second from the first full window.
    static func run(_ samples: [IMUSample]) -> [(ActivityHeldOut.Reported, MotionActivity.Confidence)] {
        var detector = StepDetector()
        var estimator = ActivityEstimator()
        var fusion = GaitActivityFusion()
        var last = -Double.infinity
        var out: [(ActivityHeldOut.Reported, MotionActivity.Confidence)] = []
        for sample in samples {
            let reading = sample.acceleration.map { detector.read(timestamp: sample.timestamp, acceleration: $0) }
            _ = estimator.update(sample)
            _ = fusion.update(classifier: estimator.activity, gait: reading)
            guard let o = estimator.lastObservation, o.time > last else { continue }
            last = o.time
            out.append((ActivityHeldOut.Reported(fusion.activity), fusion.activity.confidence))
        }
        return out
    }
}
