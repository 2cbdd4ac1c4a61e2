import Foundation
import MotionModel

/// The held-out DSADS figures `motion-bench activity` prints: per unit and in total the confusion matrix,
/// recall and precision per class, the calibration table, and how the activities that are none of Core Motion's
/// classes were reported.
enum ActivityReport {
    typealias Second = ActivityHeldOut.Second
    typealias Truth = ActivityHeldOut.Truth
    typealias Reported = ActivityHeldOut.Reported

    static func print(_ seconds: [Second]) {
        for unit in DSADSRecording.Unit.allCases {
            Swift.print("")
            Swift.print("\(unit) unit (DSADS \(unit.column)):")
            table(seconds.filter { $0.unit == unit })
        }
        Swift.print("")
        Swift.print("all three units:")
        table(seconds)
        Swift.print("")
        calibration(seconds)
        Swift.print("")
        none(seconds)
        Swift.print("")
        subjects(seconds)
    }

    static func table(_ seconds: [Second]) {
        var m = [[Int]](repeating: [Int](repeating: 0, count: Reported.allCases.count), count: Truth.allCases.count)
        for s in seconds { m[s.truth.rawValue][s.reported.rawValue] += 1 }
        Swift.print("  " + pad("truth \\ reported (s)", 22) + Reported.names.map { pad($0, 12) }.joined())
        for t in Truth.allCases {
            Swift.print("  " + pad(Truth.names[t.rawValue], 22) + m[t.rawValue].map { pad(String($0), 12) }.joined())
        }
        var line = "  recall    "
        var precision = "  precision "
        for c in [Truth.stationary, .walking, .running, .cycling] {
            let row = m[c.rawValue].reduce(0, +)
            let column = Truth.allCases.map { m[$0.rawValue][c.rawValue] }.reduce(0, +)
            line += pad(
                String(format: "%@ %.1f %%", Truth.names[c.rawValue], 100 * ratio(m[c.rawValue][c.rawValue], row)),
                22
            )
            precision += pad(
                String(format: "%@ %.1f %%", Truth.names[c.rawValue], 100 * ratio(m[c.rawValue][c.rawValue], column)),
                22
            )
        }
        Swift.print(line)
        Swift.print(precision + " (every reported second, none's included)")
    }

    /// Per confidence level: how many seconds were reported at it and how often the class was right (seconds
    /// whose truth is one of Core Motion's classes; none's seconds are counted apart).
    static func calibration(_ seconds: [Second]) {
        Swift.print(
            "calibration (every unit; seconds of Core Motion's classes): how often the reported class was right"
        )
        Swift.print(
            "  " + pad("confidence", 12) + pad("seconds", 10) + pad("right", 10) + "per class (right / seconds)"
        )
        let known = seconds.filter { $0.truth != .none && $0.reported != .unknown }
        for level in [MotionActivity.Confidence.high, .medium, .low] {
            let at = known.filter { $0.confidence == level }
            let right = at.filter { $0.truth.matches($0.reported) }.count
            var perClass = ""
            for c in Reported.allCases where c != .unknown {
                let reported = at.filter { $0.reported == c }
                guard !reported.isEmpty else { continue }
                let r = reported.filter { $0.truth.matches($0.reported) }.count
                perClass += String(
                    format: "%@ %.1f %% (%d)  ",
                    c.description,
                    100 * ratio(r, reported.count),
                    reported.count
                )
            }
            Swift.print(
                "  " + pad(level.rawValue, 12) + pad(String(at.count), 10)
                    + pad(String(format: "%.2f %%", 100 * ratio(right, at.count)), 10) + perClass
            )
        }
        let target = "targets: high ≥ 97 %, medium ≥ 85 %"
        Swift.print("  \(target); unknown: \(seconds.filter { $0.truth != .none && $0.reported == .unknown }.count) s")
    }

    /// The activities that are none of the classes: how they were reported, and how often as running or
    /// cycling above `low` (target: at most 5 % of each one's time).
    static func none(_ seconds: [Second]) {
        Swift.print(
            "activities that are none of Core Motion's classes (target: running or cycling above low ≤ 5 % of the time)"
        )
        for a in [8, 18, 19] {
            for unit in DSADSRecording.Unit.allCases {
                let s = seconds.filter { $0.activity == a && $0.unit == unit }
                guard !s.isEmpty else { continue }
                let bad = s.filter { ($0.reported == .running || $0.reported == .cycling) && $0.confidence > .low }
                    .count
                var how = ""
                for c in Reported.allCases {
                    let n = s.filter { $0.reported == c }.count
                    if n > 0 { how += String(format: "%@ %.0f %% ", c.description, 100 * ratio(n, s.count)) }
                }
                Swift.print(
                    String(
                        format: "  a%02d %@, %@: running/cycling above low %.1f %%   (%@)",
                        a,
                        DSADSRecording.activityNames[a] ?? "",
                        unit.description,
                        100 * ratio(bad, s.count),
                        how
                    )
                )
            }
        }
    }

    /// Recall per held-out subject and unit, for the worst case.
    static func subjects(_ seconds: [Second]) {
        Swift.print("recall per held-out subject (stationary / walking / running / cycling), per unit")
        let subjects = Set(seconds.map(\.subject)).sorted()
        for unit in DSADSRecording.Unit.allCases {
            var line = "  " + pad(unit.description, 7)
            for subject in subjects {
                let s = seconds.filter { $0.unit == unit && $0.subject == subject }
                let r = [Truth.stationary, .walking, .running, .cycling].map { c -> String in
                    let t = s.filter { $0.truth == c }
                    return String(format: "%.0f", 100 * ratio(t.filter { c.matches($0.reported) }.count, t.count))
                }
                line += "p\(subject) " + r.joined(separator: "/") + "  "
            }
            Swift.print(line)
        }
    }

    /// Every second as CSV, for calibrating the confidence thresholds.
    static func write(_ seconds: [Second], to path: String) throws {
        var out = "subject,activity,unit,time,truth,reported,confidence,classifier,gait,"
        out += "stationary,walking,running,cycling,automotive,none\n"
        for s in seconds {
            let p = s.smoothed
            out += "\(s.subject),\(s.activity),\(s.unit),\(s.time),\(Truth.names[s.truth.rawValue]),\(s.reported),"
            out += "\(s.confidence.rawValue),\(s.classifier),\(s.gait ? 1 : 0),"
            out += "\(p.stationary),\(p.walking),\(p.running),\(p.cycling),\(p.automotive),\(p.none)\n"
        }
        try out.write(toFile: path, atomically: true, encoding: .utf8)
    }

    static func ratio(_ a: Int, _ b: Int) -> Double { b > 0 ? Double(a) / Double(b) : 0 }
}
