import ArgumentParser
import Foundation
import MotionModel

/// One SisFall trial (Sucerquia, López, Vargas-Bonilla, Sensors 17(1):198, 2017) in the agent's units: the waist
/// device's ADXL345 (±16 g, 13 bits: g = counts × 32 / 8192, specific force, so Core Motion's acceleration is its
/// opposite) and ITG3200 (±2000 °/s, 16 bits: °/s = counts × 4000 / 65536) at 200 Hz, sample n at n / 200 s.
struct SisFallTrial {
    static let rateHz = 200.0
    static let accelerationGPerCount = 32.0 / 8192.0
    static let rotationRadPerSPerCount = 4000.0 / 65536.0 * Double.pi / 180

    /// `D01_SA01_R01`.
    var name: String
    /// `D01` … `D19` (activities of daily living), `F01` … `F15` (falls).
    var code: String
    var subject: String
    var acceleration: [Vector3]
    var rotationRate: [Vector3]

    var isFall: Bool { code.hasPrefix("F") }

    /// Every trial under `root` (SUBJECT/CODE_SUBJECT_RNN.csv.gz or .csv), sorted by name.
    static func loadAll(_ root: String) throws -> [SisFallTrial] {
        let fm = FileManager.default
        var paths: [String] = []
        for subject in try fm.contentsOfDirectory(atPath: root).sorted() {
            let folder = (root as NSString).appendingPathComponent(subject)
            guard let files = try? fm.contentsOfDirectory(atPath: folder) else { continue }
            for f in files where f.hasSuffix(".csv.gz") || f.hasSuffix(".csv") {
                paths.append((folder as NSString).appendingPathComponent(f))
            }
        }
        guard !paths.isEmpty else {
            throw ValidationError(
                "no SisFall trials under \(root): expected SUBJECT/CODE_SUBJECT_RNN.csv.gz — \(DataSets.DataSet.falls.fetch)"
            )
        }
        return try paths.map { try load($0) }.sorted { $0.name < $1.name }
    }

    static func load(_ path: String) throws -> SisFallTrial {
        let file = (path as NSString).lastPathComponent
        let name = String(file.prefix { $0 != "." })
        let parts = name.split(separator: "_")
        guard parts.count >= 3 else {
            throw ValidationError("\(path): a SisFall trial is named CODE_SUBJECT_RNN (e.g. D01_SA01_R01.csv.gz)")
        }
        let bytes = path.hasSuffix(".gz") ? try gunzip(path) : try Data(contentsOf: URL(fileURLWithPath: path))
        var trial = SisFallTrial(
            name: name,
            code: String(parts[0]),
            subject: String(parts[1]),
            acceleration: [],
            rotationRate: []
        )
        try parse(bytes, path: path, into: &trial)
        return trial
    }

    /// Rows of six integers after a header line: adxl345_x..z, itg3200_x..z (a 7th+ column, if any, is ignored).
    private static func parse(_ bytes: Data, path: String, into trial: inout SisFallTrial) throws {
        var values = [Int](repeating: 0, count: 6)
        var column = 0
        var value = 0
        var negative = false
        var digits = false
        var line = 0
        func endField() {
            if column < 6 { values[column] = negative ? -value : value }
            column += 1
            value = 0
            negative = false
            digits = false
        }
        for byte in bytes {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"):
                value = value * 10 + Int(byte - UInt8(ascii: "0"))
                digits = true
            case UInt8(ascii: "-"):
                negative = true
            case UInt8(ascii: ","):
                endField()
            case UInt8(ascii: "\n"):
                if line > 0, digits || column > 0 {
                    endField()
                    guard column >= 6 else {
                        throw ValidationError("\(path) line \(line + 1): \(column) columns, expected 6 (SisFall's)")
                    }
                    let s = accelerationGPerCount
                    let r = rotationRadPerSPerCount
                    trial.acceleration.append(
                        Vector3(-Double(values[0]) * s, -Double(values[1]) * s, -Double(values[2]) * s)
                    )
                    trial.rotationRate.append(
                        Vector3(Double(values[3]) * r, Double(values[4]) * r, Double(values[5]) * r)
                    )
                }
                line += 1
                column = 0
                value = 0
                negative = false
                digits = false
            case UInt8(ascii: " "), UInt8(ascii: "\r"), UInt8(ascii: ";"):
                break
            default:
                // the header's letters
                guard line == 0 else {
                    throw ValidationError("\(path) line \(line + 1): unexpected character in a row of counts")
                }
            }
        }
        guard !trial.acceleration.isEmpty else { throw ValidationError("\(path) holds no samples") }
    }

    /// The file decompressed by gzip(1): Foundation on Linux has no gzip decoder.
    private static func gunzip(_ path: String) throws -> Data {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["gzip", "-dc", path]
        let pipe = Pipe()
        process.standardOutput = pipe
        do {
            try process.run()
        } catch {
            throw ValidationError("cannot run gzip to read \(path): \(error) — install gzip (apt-get install gzip)")
        }
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw ValidationError("gzip -dc \(path) failed (status \(process.terminationStatus)): is it a gzip file?")
        }
        return data
    }
}
