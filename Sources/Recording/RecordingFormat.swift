import AgentPorts
import MotionModel

/// The record/replay CSV: one row per instant, calibrated values in the agent's units and Core Motion's sign
/// convention, an empty cell where that sensor gave no sample at that instant (so sensors at different rates
/// share one file). Columns after the twelve known ones are ignored on reading, so the format can grow.
///
/// `timestamp,acc_x,acc_y,acc_z,gyro_x,gyro_y,gyro_z,mag_x,mag_y,mag_z,pressure,temperature`
/// s, g (face up at rest: acc_z = −1), rad/s, µT, kPa, °C.
package enum RecordingFormat {
    package static let header =
        "timestamp,acc_x,acc_y,acc_z,gyro_x,gyro_y,gyro_z,mag_x,mag_y,mag_z,pressure,temperature"
    package static let columns = header.split(separator: ",").map(String.init)

    /// Parses one data row. `lineNumber` is for the error message only.
    package static func parse(row: Substring, lineNumber: Int) throws(RecordingError) -> IMUSample {
        var cells:
            (
                Substring?, Substring?, Substring?, Substring?, Substring?, Substring?, Substring?, Substring?,
                Substring?, Substring?, Substring?, Substring?
            ) =
                (nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil)
        var index = 0
        // Byte-wise: replay parses every row as it plays (1000 rows/s at 1 kHz), and walking Characters costs
        // grapheme-break checks per byte. Commas are ASCII, so the byte indices are valid Substring bounds.
        let utf8 = row.utf8
        var start = utf8.startIndex
        var i = utf8.startIndex
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
        while i < utf8.endIndex {
            if utf8[i] == UInt8(ascii: ",") {
                store(row[start..<i])
                index += 1
                start = utf8.index(after: i)
            }
            i = utf8.index(after: i)
        }
        store(row[start..<utf8.endIndex])

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
    package static func format(_ s: IMUSample) -> String {
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
package struct RecordingError: Error, CustomStringConvertible, Sendable, Equatable {
    package var file: String?
    package var line: Int
    package var message: String

    package init(file: String? = nil, line: Int, message: String) {
        self.file = file
        self.line = line
        self.message = message
    }

    package var description: String { "\(file ?? "recording"):\(line): \(message)" }
}

extension Substring {
    /// Without leading and trailing spaces, tabs and carriage returns (a CRLF file's lines end in "\r").
    var trimmingSpaces: Substring {
        let utf8 = self.utf8
        func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0D }
        var lower = utf8.startIndex
        var upper = utf8.endIndex
        while lower < upper, isSpace(utf8[lower]) { lower = utf8.index(after: lower) }
        while upper > lower, isSpace(utf8[utf8.index(before: upper)]) { upper = utf8.index(before: upper) }
        return self[lower..<upper]
    }
}
