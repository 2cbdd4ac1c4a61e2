import ArgumentParser
import Foundation
import MotionEstimation
import MotionModel

/// The activity classifier on real recordings: DSADS with each subject held out (stationary, walking,
/// running, cycling and activities that are none of them; torso, arm and leg units) and TMD's held-out windows
/// for automotive.
struct ActivityAccuracy: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "activity",
        abstract:
            "The activity on DSADS with each subject held out (confusion, recall, precision, calibration) and on TMD."
    )

    @Option(
        help: "The activity folder: dsads/ and tmd_dataset_5secondWindow.csv (default $MOTION_AGENT_DATA/activity)."
    )
    var data: String?

    @Option(help: "Feed DSADS at this rate, Hz (linear interpolation of its 25 Hz); default its own 25 Hz.")
    var rate: Double?

    @Flag(help: "The classifier alone, without the step detector's gait.")
    var noGait = false

    @Option(help: "Only these subjects, comma-separated (default all eight).")
    var subjects: String?

    @Option(help: "Also run the shipped model on SisFall's waist-worn walks, jogs and jumps (its folder, SA01…SE06).")
    var sisfall: String?

    @Option(help: "Write every held-out second (truth, report, confidence, smoothed probabilities) to this CSV.")
    var secondsOutput: String?

    @Option(help: "Write the classifier's features of every DSADS window to this CSV (for the training script).")
    var featuresOutput: String?

    @Option(help: "With --features-output: rates (Hz) to dump, comma-separated; 25 is the recording's own.")
    var rates = "25"

    func run() throws {
        let folder = URL(fileURLWithPath: try DataSets.path(data, "activity", set: .activity))
        let dsads = folder.appendingPathComponent("dsads")
        guard FileManager.default.fileExists(atPath: dsads.path) else {
            throw ValidationError("\(dsads.path) does not exist — \(DataSets.DataSet.activity.fetch)")
        }
        let wanted = subjects.map { Set($0.split(separator: ",").compactMap { Int($0) }) }
        let files = try DSADSRecording.files(in: dsads).filter { wanted?.contains($0.subject) ?? true }
        guard !files.isEmpty else { throw ValidationError("no aNN_pM.csv.gz files under \(dsads.path)") }
        if let featuresOutput {
            let recordings = try files.map {
                try DSADSRecording(activity: $0.activity, subject: $0.subject, url: $0.url)
            }
            let rates: [Double?] = rates.split(separator: ",").map { Double($0).flatMap { $0 == 25 ? nil : $0 } }
            try ActivityFeatureDump.write(recordings: recordings, ratesHz: rates, to: featuresOutput)
            print("wrote \(featuresOutput)")
            return
        }
        let folds = try Dictionary(
            uniqueKeysWithValues: ActivityFoldModels.tables.map {
                (
                    $0.subject,
                    ActivityModel(
                        motion: try ActivityTrees(table: $0.motion),
                        vehicle: try ActivityTrees(table: $0.vehicle)
                    )
                )
            }
        )
        var seconds: [ActivityHeldOut.Second] = []
        for file in files {
            guard let model = folds[file.subject] else {
                throw ValidationError("no held-out model for subject \(file.subject): re-run train_activity.py")
            }
            let recording = try DSADSRecording(activity: file.activity, subject: file.subject, url: file.url)
            for unit in DSADSRecording.Unit.allCases {
                seconds += ActivityHeldOut.run(
                    recording,
                    unit: unit,
                    model: model,
                    settings: .defaults,
                    rateHz: rate,
                    gait: !noGait
                )
            }
        }
        print(
            "Activity on DSADS (Altun, Barshan & Tunçel 2010; UCI Daily and Sports Activities, CC BY 4.0), each subject"
                + " held out: the model of the other seven, at \(rate.map { String(format: "%g Hz (interpolated)", $0) } ?? "25 Hz"),"
                + " read once a second\(noGait ? ", classifier alone (no gait)" : ", fused with the step detector's gait as the agent does")"
        )
        ActivityReport.print(seconds)
        if let secondsOutput { try ActivityReport.write(seconds, to: secondsOutput) }
        try tmd(folder.appendingPathComponent("tmd_dataset_5secondWindow.csv").path)
        if let sisfall { try SisFallActivity.run(folder: URL(fileURLWithPath: sisfall)) }
    }

    /// The vehicle model on TMD's held-out rows (`row % 5 == 0`; the shipped model trained on the others).
    func tmd(_ path: String) throws {
        let rows = try Self.heldOut(path)
        let model = ActivityModel.shipped
        let settings = ActivityEstimator.Settings.defaults
        var matrix = [[Int]](repeating: [0, 0], count: 3)
        var levels = [MotionActivity.Confidence: (Int, Int)]()
        for (w, truth) in rows {
            let p = model.vehicleProbability(w)
            let row = truth == .automotive ? 2 : truth == .walking ? 1 : 0
            matrix[row][p >= 0.5 ? 1 : 0] += 1
            // Automotive's confidence as the estimator would give it to a steady window.
            guard p >= 0.5 else { continue }
            let level = settings.confidence(of: .automotive, probability: p)
            let right = truth == .automotive ? 1 : 0
            levels[level, default: (0, 0)] = (
                levels[level, default: (0, 0)].0 + 1, levels[level, default: (0, 0)].1 + right
            )
        }
        print("")
        print(
            "Automotive on TMD's 5 s windows (Bologna transportation-mode data via deveshsangwan/Transportation-Mode-Detection,"
                + " CC0): the shipped vehicle model on the \(rows.count) held-out rows (row % 5 == 0; Car+Bus+Train = automotive)"
        )
        print("truth \\ vehicle model   not automotive  automotive")
        for (i, name) in ["Still", "Walking", "Car+Bus+Train"].enumerated() {
            print(pad(name, 24) + pad(String(matrix[i][0]), 16) + String(matrix[i][1]))
        }
        let right = matrix[0][0] + matrix[1][0] + matrix[2][1]
        let total = matrix.flatMap { $0 }.reduce(0, +)
        let called = matrix[0][1] + matrix[1][1] + matrix[2][1]
        print(
            String(
                format: "automotive recall %.1f %%, precision %.1f %%; right %.2f %% of windows",
                100 * Double(matrix[2][1]) / Double(max(matrix[2][0] + matrix[2][1], 1)),
                100 * Double(matrix[2][1]) / Double(max(called, 1)),
                100 * Double(right) / Double(max(total, 1))
            )
        )
        for level in [MotionActivity.Confidence.high, .medium, .low] {
            let (n, r) = levels[level, default: (0, 0)]
            print(
                String(
                    format: "  automotive at %@: %d windows, %.1f %% right",
                    level.rawValue,
                    n,
                    100 * Double(r) / Double(max(n, 1))
                )
            )
        }
        print("no raw vehicle recording could be had: automotive is checked on these windows only, which have no")
        print("recording ids — windows of one trip can fall on both sides of the split, so the figures are optimistic")
    }

    /// TMD's label merged into the agent's classes.
    static func label(_ target: Substring) -> ActivityModel.ActivityClass? {
        switch target {
        case "Still": .stationary
        case "Walking": .walking
        case "Car", "Bus", "Train": .automotive
        default: nil
        }
    }

    /// The held-out rows: the training script trains the shipped vehicle model on rows with `row % 5 != 0`.
    static func heldOut(_ path: String) throws -> [(ActivityModel.WindowStatistics, ActivityModel.ActivityClass)] {
        let text = try String(contentsOfFile: path, encoding: .utf8)
        var lines = text.split(whereSeparator: \.isNewline)
        guard let header = lines.first?.split(separator: ",").map(String.init) else {
            throw ValidationError("\(path) is empty — \(DataSets.DataSet.activity.fetch)")
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
}

func pad(_ text: String, _ width: Int) -> String {
    text.count >= width ? text + " " : text + String(repeating: " ", count: width - text.count)
}
