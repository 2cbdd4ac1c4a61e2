import MotionModel

/// The record/replay CSV: one row per instant, calibrated values in the agent's units and Core Motion's sign
/// convention, an empty cell where that sensor gave no sample at that instant (so sensors at different rates
/// share one file). Columns after the twelve known ones are ignored on reading, so the format can grow.
///
/// `timestamp,acc_x,acc_y,acc_z,gyro_x,gyro_y,gyro_z,mag_x,mag_y,mag_z,pressure,temperature`
/// s, g (face up at rest: acc_z = −1), rad/s, µT, kPa, °C.
public enum RecordingFormat {
    public static let header = "timestamp,acc_x,acc_y,acc_z,gyro_x,gyro_y,gyro_z,mag_x,mag_y,mag_z,pressure,temperature"
    public static let columns = header.split(separator: ",").map(String.init)

    /// Parses one data row. `lineNumber` is for the error message only.
    public static func parse(row: Substring, lineNumber: Int) throws(RecordingError) -> IMUSample {
        var cells:
            (
                Substring?, Substring?, Substring?, Substring?, Substring?, Substring?, Substring?, Substring?,
                Substring?, Substring?, Substring?, Substring?
            ) =
                (nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil)
        var index = 0
        var start = row.startIndex
        var i = row.startIndex
        func store(_ cell: Substring) {
            switch index {
            case 0: cells.0 = cell
            case 1: cells.1 = cell
            case 2: cells.2 = cell
            case 3: cells.3 = cell
            case 4: cells.4 = cell
            case 5: cells.5 = cell
            case 6: cells.6 = cell
            case 7: cells.7 = cell
            case 8: cells.8 = cell
            case 9: cells.9 = cell
            case 10: cells.10 = cell
            case 11: cells.11 = cell
            default: break
            }
        }
        while i < row.endIndex {
            if row[i] == "," {
                store(row[start..<i])
                index += 1
                start = row.index(after: i)
            }
            i = row.index(after: i)
        }
        store(row[start..<row.endIndex])

        func number(_ cell: Substring?, _ column: Int) throws(RecordingError) -> Double? {
            guard let cell else { return nil }
            let trimmed = cell.trimmingSpaces
            if trimmed.isEmpty { return nil }
            guard let v = Double(trimmed) else {
                throw RecordingError(
                    line: lineNumber,
                    message:
                        "\(columns[column]) is '\(trimmed)', not a number — cells hold decimal numbers or are empty"
                )
            }
            return v
        }
        func vector(_ a: Substring?, _ b: Substring?, _ c: Substring?, _ first: Int) throws(RecordingError) -> Vector3?
        {
            let x = try number(a, first)
            let y = try number(b, first + 1)
            let z = try number(c, first + 2)
            switch (x, y, z) {
            case (nil, nil, nil): return nil
            case (let x?, let y?, let z?): return Vector3(x, y, z)
            default:
                throw RecordingError(
                    line: lineNumber,
                    message:
                        "\(columns[first])…\(columns[first + 2]) are partly empty — a sensor's three axes are all present or all empty"
                )
            }
        }
        guard let timestamp = try number(cells.0, 0) else {
            throw RecordingError(line: lineNumber, message: "timestamp is empty — every row needs one (seconds)")
        }
        return IMUSample(
            timestamp: timestamp,
            acceleration: try vector(cells.1, cells.2, cells.3, 1),
            rotationRate: try vector(cells.4, cells.5, cells.6, 4),
            magneticField: try vector(cells.7, cells.8, cells.9, 7),
            pressureKPa: try number(cells.10, 10),
            temperatureC: try number(cells.11, 11)
        )
    }

    /// Formats one row (without the newline).
    public static func format(_ s: IMUSample) -> String {
        func n(_ v: Double?, _ digits: Int = 9) -> String {
            guard let v, v.isFinite else { return "" }
            return String(v)
        }
        func v(_ v: Vector3?) -> String {
            guard let v else { return ",," }
            return "\(n(v.x)),\(n(v.y)),\(n(v.z))"
        }
        return
            "\(n(s.timestamp)),\(v(s.acceleration)),\(v(s.rotationRate)),\(v(s.magneticField)),\(n(s.pressureKPa)),\(n(s.temperatureC))"
    }
}

/// A problem in a recording, with its line.
public struct RecordingError: Error, CustomStringConvertible, Sendable, Equatable {
    public var file: String?
    public var line: Int
    public var message: String

    public init(file: String? = nil, line: Int, message: String) {
        self.file = file
        self.line = line
        self.message = message
    }

    public var description: String { "\(file ?? "recording"):\(line): \(message)" }
}

extension Substring {
    fileprivate var trimmingSpaces: Substring {
        var s = self
        while let f = s.first, f == " " || f == "\t" || f == "\r" { s.removeFirst() }
        while let l = s.last, l == " " || l == "\t" || l == "\r" { s.removeLast() }
        return s
    }
}
