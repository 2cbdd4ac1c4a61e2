import ArgumentParser
import Foundation
import MotionEstimation

/// Activity accuracy of the shipped classifier on the TMD windows it was not trained on.
struct ActivityAccuracy: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "activity",
        abstract: "Scores the shipped activity classifier on held-out TMD windows; prints a confusion matrix."
    )

    @Option(help: "The TMD 5 s window file (default $MOTION_AGENT_DATA/activity/tmd_dataset_5secondWindow.csv).")
    var data: String?

    /// TMD's label merged into the agent's classes.
    static func label(_ target: Substring) -> ActivityModel.ActivityClass? {
        switch target {
        case "Still": .stationary
        case "Walking": .walking
        case "Car", "Bus", "Train": .automotive
        default: nil
        }
    }

    /// The held-out rows: the training script trains the shipped trees on rows with `row % 5 != 0`.
    static func heldOut(_ path: String) throws -> [(ActivityModel.WindowStatistics, ActivityModel.ActivityClass)] {
        let text = try String(contentsOfFile: path, encoding: .utf8)
        var lines = text.split(whereSeparator: \.isNewline)
        guard let header = lines.first?.split(separator: ",").map(String.init) else {
            throw ValidationError("\(path) is empty — pass --data with tmd_dataset_5secondWindow.csv")
        }
        lines.removeFirst()
        let names = [
            "accelerometer#mean", "accelerometer#min", "accelerometer#max", "accelerometer#std",
            "gyroscope#mean", "gyroscope#min", "gyroscope#max", "gyroscope#std",
        ]
        let columns = names.compactMap { n in header.firstIndex { $0 == "android.sensor." + n } }
        guard columns.count == 8, let target = header.firstIndex(of: "target") else {
            throw ValidationError("\(path) lacks TMD's accelerometer/gyroscope mean/min/max/std and target columns")
        }
        var rows: [(ActivityModel.WindowStatistics, ActivityModel.ActivityClass)] = []
        for (i, line) in lines.enumerated() where i % 5 == 0 {
            let f = line.split(separator: ",", omittingEmptySubsequences: false)
            guard f.count > target, let c = label(f[target]) else { continue }
            let v = columns.compactMap { Double(f[$0]) }
            guard v.count == 8 else { continue }
            let w = ActivityModel.WindowStatistics(
                accelerationMean: v[0],
                accelerationMin: v[1],
                accelerationMax: v[2],
                accelerationStd: v[3],
                rotationMean: v[4],
                rotationMin: v[5],
                rotationMax: v[6],
                rotationStd: v[7]
            )
            rows.append((w, c))
        }
        return rows
    }

    func run() throws {
        let rows = try Self.heldOut(
            try DataSets.path(data, "activity/tmd_dataset_5secondWindow.csv", set: .activity)
        )
        let classes = ActivityModel.ActivityClass.allCases
        var matrix = Array(repeating: Array(repeating: 0, count: classes.count), count: classes.count)
        for (w, truth) in rows {
            matrix[truth.rawValue][ActivityModel.classify(w).0.rawValue] += 1
        }
        let correct = classes.map { matrix[$0.rawValue][$0.rawValue] }.reduce(0, +)
        print(
            "Activity, TMD 5 s windows (Bologna transportation-mode data via deveshsangwan/Transportation-Mode-Detection, CC0)"
        )
        print(
            "held out: rows with row % 5 == 0 (\(rows.count) windows), never seen in training; Car+Bus+Train = automotive"
        )
        print(
            "truth \\ predicted".padding(toLength: 18, withPad: " ", startingAt: 0)
                + classes.map { String(describing: $0).padding(toLength: 11, withPad: " ", startingAt: 0) }.joined()
        )
        for c in [ActivityModel.ActivityClass.stationary, .walking, .automotive] {
            print(
                String(describing: c).padding(toLength: 18, withPad: " ", startingAt: 0)
                    + matrix[c.rawValue].map { String($0).padding(toLength: 11, withPad: " ", startingAt: 0) }.joined()
            )
        }
        print(
            String(
                format:
                    "accuracy %.2f %% (target ≥ 90 %%; anchor: random forest on these 8 features, 5-fold by window, 90.3 %%)",
                100 * Double(correct) / Double(rows.count)
            )
        )
        print("windows of one recording can fall in both training and held-out rows (the file has no recording ids)")
        print(
            "running and cycling were trained on simulated windows only; scripts/research/activity/train_activity.py reports them"
        )
    }
}
