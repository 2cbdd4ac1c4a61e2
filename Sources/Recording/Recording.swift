import AgentPorts
import MotionModel

/// A whole recording in memory: its samples in order; `summary` tells the sensors, rates and time span.
/// (`motion-agent process` and the tests use it; replay streams through `RecordingReader` instead.)
public struct Recording: Sendable {
    public var samples: [IMUSample]

    public init(samples: [IMUSample]) {
        self.samples = samples
    }

    /// Reads a record/replay CSV. The header must start with the twelve known columns.
    public init(contentsOf path: String) throws(RecordingError) {
        var reader = try RecordingReader(path: path)
        var samples: [IMUSample] = []
        while let sample = try reader.next() { samples.append(sample) }
        self.samples = samples
    }

    public var summary: RecordingSummary {
        var summary = RecordingSummary()
        for sample in samples { summary.add(sample) }
        return summary
    }
}
