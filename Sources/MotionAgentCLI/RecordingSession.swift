import AgentPorts
import Foundation
import Logging
import MotionModel
import Recording
import ServiceLifecycle
import Synchronization

/// `motion-agent record`'s work as a `Service`: the source acquires on its own threads into a
/// `RecordingBuffer`, and this task drains it every `drainPeriod` into the CSV until the duration is over, the
/// source ends (a replay), or SIGINT/SIGTERM asks for a graceful shutdown — then it writes what it holds, so
/// an interrupted recording is still a complete, readable file.
final class RecordingSession: Service, Sendable {
    struct Outcome: Sendable {
        var summary: String
        var seconds: Double
        var faults: Int
        var interrupted: Bool
    }

    /// How often the buffered samples are taken and written, seconds.
    static let drainPeriod = 0.1

    private let source: SensorSource
    private let duration: Double
    private let output: FileHandle
    private let logger: Logger
    private let result = Mutex<Outcome?>(nil)

    init(source: SensorSource, duration: Double, output: FileHandle, logger: Logger) {
        self.source = source
        self.duration = duration
        self.output = output
        self.logger = logger
    }

    /// What was recorded, once `run` has returned.
    var outcome: Outcome? { result.withLock { $0 } }

    func run() async throws {
        var writer = try RecordingWriter(output: output)
        let buffer = RecordingBuffer()
        let finished = FinishFlag()
        let source = self.source
        let acquisition = Task {
            defer { finished.set() }
            try await source.run(into: buffer)
        }
        let clock = ContinuousClock()
        let start = clock.now
        let deadline = start + .seconds(duration)
        var batch: [IMUSample] = []
        batch.reserveCapacity(16384)
        var faults = 0
        func drain(final: Bool) throws {
            for fault in buffer.drain(into: &batch) {
                let metadata: Logger.Metadata = ["iio.device": "\(fault.deviceID)"]
                if fault.recovered {
                    logger.notice("sensor device recovered", metadata: metadata)
                } else {
                    faults += 1
                    logger.error("sensor device fault: \(fault.message)", metadata: metadata)
                }
            }
            try writer.write(batch, final: final)
            batch.removeAll(keepingCapacity: true)
        }
        var interrupted = false
        while clock.now < deadline && !finished.isSet {
            if Task.isShuttingDownGracefully || Task.isCancelled {
                interrupted = true
                break
            }
            try? await Task.sleep(until: min(deadline, clock.now + .seconds(Self.drainPeriod)), clock: clock)
            try drain(final: false)
        }
        acquisition.cancel()
        let ended = await acquisition.result
        try drain(final: true)
        if case .failure(let error) = ended, !(error is CancellationError) { throw error }
        let elapsed = clock.now - start
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        let outcome = Outcome(summary: writer.summary, seconds: seconds, faults: faults, interrupted: interrupted)
        result.withLock { $0 = outcome }
    }
}

/// Set once the acquisition task ends (a replay reaching its end), read by the writer loop.
private final class FinishFlag: Sendable {
    private let value = Mutex(false)
    func set() { value.withLock { $0 = true } }
    var isSet: Bool { value.withLock { $0 } }
}
