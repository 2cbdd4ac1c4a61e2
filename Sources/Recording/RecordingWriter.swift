import AgentPorts
import Foundation
import MotionModel

/// Writes samples as record/replay CSV rows (`RecordingFormat`), one row per `IMUSample`, in timestamp order.
///
/// Separate devices deliver in refills (IIO: 20 ms each, polled devices as they are read), so samples arrive
/// slightly out of order across devices, while `Recording` refuses a timestamp going backwards. Rows are held
/// for `reorderWindow` seconds of sample time behind the newest timestamp seen and written sorted; a sample
/// older than a row already written is counted in `late` and left out.
package struct RecordingWriter {
    /// Sample-time seconds a row waits for earlier samples from other devices.
    package let reorderWindow: Double
    package private(set) var rows = 0
    /// Rows holding each sensor (the barometer counts rows with a pressure).
    package private(set) var counts: [SensorType: Int] = [:]
    /// Samples left out because a later row had already been written.
    package private(set) var late = 0

    private let output: FileHandle
    /// Samples waiting for the window, with their arrival number: rows with equal timestamps (two devices
    /// sampled at the same instant) keep their arrival order, so a replayed file is recorded identically.
    private var held: [(arrival: Int, sample: IMUSample)] = []
    private var arrivals = 0
    private var newest = -Double.infinity
    private var lastWritten = -Double.infinity

    /// Writes the header at once.
    package init(output: FileHandle, reorderWindow: Double = 1) throws {
        self.output = output
        self.reorderWindow = reorderWindow
        try output.write(contentsOf: Data((RecordingFormat.header + "\n").utf8))
    }

    /// Takes a batch and writes the rows older than the reorder window; `final` writes everything held.
    package mutating func write(_ batch: [IMUSample], final: Bool = false) throws {
        for sample in batch {
            guard sample.timestamp.isFinite, sample.timestamp >= lastWritten else {
                late += 1
                continue
            }
            held.append((arrivals, sample))
            arrivals += 1
            newest = max(newest, sample.timestamp)
        }
        guard !held.isEmpty else { return }
        held.sort { ($0.sample.timestamp, $0.arrival) < ($1.sample.timestamp, $1.arrival) }
        let cutoff = final ? Double.infinity : newest - reorderWindow
        let ready = held.firstIndex { $0.sample.timestamp > cutoff } ?? held.endIndex
        guard ready > 0 else { return }
        var text = ""
        text.reserveCapacity(ready * 120)
        for (_, sample) in held[..<ready] {
            text += RecordingFormat.format(sample)
            text += "\n"
            rows += 1
            for sensor in SensorType.allCases where sample.has(sensor) { counts[sensor, default: 0] += 1 }
        }
        lastWritten = held[ready - 1].sample.timestamp
        held.removeFirst(ready)
        try output.write(contentsOf: Data(text.utf8))
    }

    /// "1234 rows: accelerometer 1000, gyroscope 1000, magnetometer 200, barometer 34".
    package var summary: String {
        var text =
            "\(rows) rows: "
            + SensorType.allCases.map { "\($0.rawValue) \(counts[$0] ?? 0)" }.joined(separator: ", ")
        if late > 0 { text += "; \(late) late samples left out" }
        return text
    }
}
