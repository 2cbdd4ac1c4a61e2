import AgentPorts
import MotionModel

/// A whole recording in memory: its samples in order; `summary` tells the sensors, rates and time span.
/// (`motion-agent process` and the tests use it; replay streams through `RecordingReader` instead.)
package struct Recording: Sendable {
    package var samples: [IMUSample]

    package init(samples: [IMUSample]) {
        self.samples = samples
    }

    /// Reads a record/replay CSV. The header must start with the twelve known columns.
    package init(contentsOf path: String) throws(RecordingError) {
        var reader = try RecordingReader(path: path)
        var samples: [IMUSample] = []
        while let sample = try reader.next() { samples.append(sample) }
        self.samples = samples
    }

    package var summary: RecordingSummary {
        var summary = RecordingSummary()
        for sample in samples { summary.add(sample) }
        return summary
    }
}
