import Logging
import Synchronization

/// Keeps every line a simulated device logs, for a scenario test that checks what the agent said (a full disk, a
/// failover, an ignored server reference): pass `logger` to `SimulationWorld.addDevice(_:configuration:logger:)`.
/// Each line is the message followed by its metadata (`key=value`, sorted), at every level from trace up.
package final class SimulationLogRecorder: Sendable {
    private let recorded = Mutex<[String]>([])

    package init() {}

    /// A logger whose lines this recorder keeps.
    package func logger(label: String = "motion-agent.simulation") -> Logger {
        var logger = Logger(label: label) { _ in Handler(recorder: self) }
        logger.logLevel = .trace
        return logger
    }

    /// Every line so far, oldest first.
    package var lines: [String] { recorded.withLock { $0 } }

    /// The lines containing `text`.
    package func lines(containing text: String) -> [String] { lines.filter { $0.contains(text) } }

    /// Whether some line contains `text`.
    package func contains(_ text: String) -> Bool { recorded.withLock { $0.contains { $0.contains(text) } } }

    fileprivate func record(_ line: String) { recorded.withLock { $0.append(line) } }

    private struct Handler: LogHandler {
        let recorder: SimulationLogRecorder
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            let all = metadata.merging(event.metadata ?? [:]) { $1 }
            let fields = all.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
            recorder.record(([event.message.description] + fields).joined(separator: " "))
        }
    }
}
