import AgentPorts
import MotionModel
import Synchronization

/// The sink `motion-agent record` hands a source: the acquisition thread only appends each sample to an array
/// under a lock (no file I/O, no allocation while the reserved capacity lasts), and a task takes the whole
/// batch every few tens of milliseconds by swapping arrays (`RecordingWriter` formats and writes it).
package final class RecordingBuffer: SampleSink {
    struct Pending {
        var samples: [IMUSample]
        var faults: [SourceFault] = []
    }

    private let pending: Mutex<Pending>

    /// - Parameter capacity: samples held between two drains before the array grows: at 4 × 1.6 kHz
    ///   devices and a 100 ms drain period about 640; 16384 leaves room for a slow disk.
    package init(capacity: Int = 16384) {
        var samples: [IMUSample] = []
        samples.reserveCapacity(capacity)
        pending = Mutex(Pending(samples: samples))
    }

    package func ingest(_ sample: IMUSample) {
        pending.withLock { $0.samples.append(sample) }
    }

    package func report(_ fault: SourceFault) {
        pending.withLock { $0.faults.append(fault) }
    }

    /// Moves everything received since the last call into `samples` (which must be empty; its capacity is
    /// handed to the acquisition side, so the two arrays take turns) and returns the faults reported.
    package func drain(into samples: inout [IMUSample]) -> [SourceFault] {
        precondition(samples.isEmpty, "drain into an empty array")
        return pending.withLock { pending in
            swap(&pending.samples, &samples)
            let faults = pending.faults
            pending.faults.removeAll()
            return faults
        }
    }
}
