import Foundation
import MotionModel

/// A whole recording in memory: its samples in order, the sensors it holds and the rate each was recorded at.
public struct Recording: Sendable {
    public var samples: [IMUSample]

    public init(samples: [IMUSample]) {
        self.samples = samples
    }

    /// Reads a record/replay CSV. The header must start with the twelve known columns.
    public init(contentsOf path: String) throws(RecordingError) {
        let text: String
        do {
            text = try String(contentsOfFile: path, encoding: .utf8)
        } catch {
            throw RecordingError(
                file: path,
                line: 0,
                message: "cannot read: \(error.localizedDescription) — check source.replay.file / --input"
            )
        }
        var samples: [IMUSample] = []
        samples.reserveCapacity(text.utf8.count / 80)
        var lineNumber = 0
        var sawHeader = false
        var previous = -Double.infinity
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            lineNumber += 1
            if line.isEmpty || line.allSatisfy({ $0 == "\r" }) { continue }
            if !sawHeader {
                let columns = line.split(separator: ",").map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
                guard Array(columns.prefix(RecordingFormat.columns.count)) == RecordingFormat.columns else {
                    throw RecordingError(
                        file: path,
                        line: lineNumber,
                        message: "the header must begin with \(RecordingFormat.header)"
                    )
                }
                sawHeader = true
                continue
            }
            do throws(RecordingError) {
                let sample = try RecordingFormat.parse(row: line, lineNumber: lineNumber)
                guard sample.timestamp >= previous else {
                    throw RecordingError(
                        line: lineNumber,
                        message:
                            "timestamp \(sample.timestamp) goes backwards (previous \(previous)) — rows must be in time order"
                    )
                }
                previous = sample.timestamp
                samples.append(sample)
            } catch {
                var e = error
                e.file = path
                throw e
            }
        }
        guard sawHeader else {
            throw RecordingError(
                file: path,
                line: 1,
                message: "empty file — expected the header \(RecordingFormat.header)"
            )
        }
        self.samples = samples
    }

    public var sensors: Set<SensorType> {
        var s: Set<SensorType> = []
        for sample in samples {
            for sensor in SensorType.allCases where sample.has(sensor) { s.insert(sensor) }
            if s.count == SensorType.allCases.count { break }
        }
        return s
    }

    /// The median rate at which `sensor` was recorded, Hz (robust to the odd gap).
    public func rateHz(of sensor: SensorType) -> Double? {
        var times: [Double] = []
        for sample in samples where sample.has(sensor) {
            times.append(sample.timestamp)
            if times.count > 2001 { break }
        }
        guard times.count > 1 else { return nil }
        let gaps = zip(times.dropFirst(), times).map { $0 - $1 }.filter { $0 > 0 }.sorted()
        guard !gaps.isEmpty else { return nil }
        // Milli-hertz resolution: enough to tell 285.714 Hz from 285.7, and 100 stays 100.
        return (1000 / gaps[gaps.count / 2]).rounded() / 1000
    }

    public var duration: Double {
        guard let first = samples.first, let last = samples.last else { return 0 }
        return last.timestamp - first.timestamp
    }
}
