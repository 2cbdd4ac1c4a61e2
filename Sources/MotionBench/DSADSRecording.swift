import ArgumentParser
import Foundation
import MotionEstimation
import MotionModel

/// One DSADS recording (Altun, Barshan & Tunçel 2010; UCI "Daily and Sports Activities", CC BY 4.0): one
/// subject doing one activity for 5 minutes at 25 Hz, three of its body-worn units kept — torso, right arm,
/// right leg — as `activity/dsads/aNN_pM.csv.gz` (gzip CSV: `segment, t_s`, then per unit `acc_x..z` m/s²
/// specific force and `gyro_x..z` rad/s).
struct DSADSRecording {
    enum Unit: Int, CaseIterable, CustomStringConvertible {
        case torso, arm, leg

        var column: String {
            switch self {
            case .torso: "T"
            case .arm: "RA"
            case .leg: "RL"
            }
        }

        var description: String {
            switch self {
            case .torso: "torso"
            case .arm: "arm"
            case .leg: "leg"
            }
        }
    }

    /// Core Motion's class of a DSADS activity; nil for those that are none of them (an elevator ride with
    /// walking in it, jumping, basketball).
    static func coreMotionClass(activity: Int) -> ActivityModel.ActivityClass? {
        switch activity {
        case 1, 2, 3, 7: .stationary
        case 5, 6, 9, 10, 11: .walking
        case 12: .running
        case 15, 16: .cycling
        default: nil
        }
    }

    static let activityNames: [Int: String] = [
        1: "sitting", 2: "standing", 3: "lying on the back", 5: "ascending stairs", 6: "descending stairs",
        7: "standing in an elevator", 8: "moving around in an elevator", 9: "walking in a parking lot",
        10: "treadmill 4 km/h", 11: "treadmill 4 km/h, 15° incline", 12: "running, treadmill 8 km/h",
        15: "exercise bike, horizontal", 16: "exercise bike, vertical", 18: "jumping", 19: "basketball",
    ]

    let activity: Int
    let subject: Int
    /// Seconds from the start.
    let time: [Double]
    /// Per unit: specific force, m/s², and rotation rate, rad/s.
    let acceleration: [[Vector3]]
    let rotationRate: [[Vector3]]

    /// The recordings under `folder` (`aNN_pM.csv.gz` or `.csv`), in activity and subject order.
    static func files(in folder: URL) throws -> [(activity: Int, subject: Int, url: URL)] {
        let names = try FileManager.default.contentsOfDirectory(atPath: folder.path)
        var out: [(Int, Int, URL)] = []
        for name in names {
            guard name.hasPrefix("a"), name.hasSuffix(".csv.gz") || name.hasSuffix(".csv") else { continue }
            let stem = name.split(separator: ".")[0]
            let parts = stem.split(separator: "_")
            guard parts.count == 2, let a = Int(parts[0].dropFirst()), parts[1].hasPrefix("p"),
                let p = Int(parts[1].dropFirst())
            else { continue }
            out.append((a, p, folder.appendingPathComponent(name)))
        }
        return out.sorted { ($0.0, $0.1) < ($1.0, $1.1) }
    }

    init(activity: Int, subject: Int, url: URL) throws {
        self.activity = activity
        self.subject = subject
        let text = try Self.text(url)
        var lines = text.split(whereSeparator: \.isNewline)
        guard let header = lines.first?.split(separator: ",").map(String.init) else {
            throw ValidationError("\(url.path) is empty")
        }
        lines.removeFirst()
        guard let t = header.firstIndex(of: "t_s") else { throw ValidationError("\(url.path) has no t_s column") }
        var columns: [[Int]] = []
        for unit in Unit.allCases {
            let names = ["acc_x", "acc_y", "acc_z", "gyro_x", "gyro_y", "gyro_z"].map { unit.column + "_" + $0 }
            let found = names.compactMap { header.firstIndex(of: $0) }
            guard found.count == 6 else {
                throw ValidationError("\(url.path) lacks \(names.joined(separator: ", ")) — is it a DSADS file?")
            }
            columns.append(found)
        }
        var time: [Double] = []
        var acc = Array(repeating: [Vector3](), count: 3)
        var gyro = Array(repeating: [Vector3](), count: 3)
        time.reserveCapacity(lines.count)
        for line in lines {
            let f = line.split(separator: ",", omittingEmptySubsequences: false)
            guard f.count == header.count, let ts = Double(f[t]) else { continue }
            var values: [Vector3] = []
            for c in columns {
                let v = c.compactMap { Double(f[$0]) }
                guard v.count == 6 else { break }
                values.append(Vector3(v[0], v[1], v[2]))
                values.append(Vector3(v[3], v[4], v[5]))
            }
            guard values.count == 6 else { continue }
            time.append(ts)
            for u in 0..<3 {
                acc[u].append(values[2 * u])
                gyro[u].append(values[2 * u + 1])
            }
        }
        self.time = time
        acceleration = acc
        rotationRate = gyro
    }

    /// The unit's samples as the agent sees them (acceleration in g with Core Motion's sign, −f / g₀), at the
    /// recording's 25 Hz or resampled to `rateHz` (linear interpolation: a higher rate that claims nothing
    /// the recording does not hold, to check the classifier reads any rate the same).
    func samples(unit: Unit, rateHz: Double? = nil) -> [IMUSample] {
        let acc = acceleration[unit.rawValue]
        let gyro = rotationRate[unit.rawValue]
        func sample(_ t: Double, _ a: Vector3, _ w: Vector3) -> IMUSample {
            IMUSample(timestamp: t, acceleration: -1 / standardGravity * a, rotationRate: w)
        }
        guard let rate = rateHz, let first = time.first, let last = time.last, time.count > 1 else {
            return time.indices.map { sample(time[$0], acc[$0], gyro[$0]) }
        }
        var out: [IMUSample] = []
        out.reserveCapacity(Int((last - first) * rate) + 1)
        var j = 0
        var t = first
        var k = 0
        while t <= last {
            while j + 1 < time.count - 1, time[j + 1] <= t { j += 1 }
            let span = time[j + 1] - time[j]
            let f = span > 0 ? min(max((t - time[j]) / span, 0), 1) : 0
            out.append(sample(t, acc[j] + f * (acc[j + 1] - acc[j]), gyro[j] + f * (gyro[j + 1] - gyro[j])))
            k += 1
            t = first + Double(k) / rate
        }
        return out
    }

    /// A file's text, gunzipped by `gzip -dc` when it ends in .gz.
    static func text(_ url: URL) throws -> String {
        guard url.pathExtension == "gz" else { return try String(contentsOf: url, encoding: .utf8) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["gzip", "-dc", url.path]
        let pipe = Pipe()
        process.standardOutput = pipe
        do {
            try process.run()
        } catch {
            throw ValidationError("cannot run gzip to read \(url.path) (\(error)) — install gzip, or gunzip the files")
        }
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw ValidationError("gzip -dc \(url.path) failed (status \(process.terminationStatus))")
        }
        return String(decoding: data, as: UTF8.self)
    }
}
