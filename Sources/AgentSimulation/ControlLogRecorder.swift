import AgentConfig
import AgentControl
import Logging
import Synchronization

/// What a simulated agent logs, kept line by line, for a scenario test that checks what an operator reading the
/// journal would see (a refusal named, an escape sequence printed harmless). One recorder per device: the lines
/// keep their order, and a restarted process logs on into the same recorder.
///
/// Lines are kept from `level` up — `.info` by default, as the end-to-end tests' agents ran with
/// `agent.log_level: info` — each as the message followed by its metadata (`key=value`, sorted), the level first.
package final class ControlLogRecorder: Sendable {
    private let recorded = Mutex<[String]>([])
    private let level: Logger.Level

    package init(level: Logger.Level = .info) {
        self.level = level
    }

    /// Every line so far, oldest first.
    package var lines: [String] { recorded.withLock { $0 } }

    /// Whether a line contains `text`.
    package func contains(_ text: String) -> Bool { recorded.withLock { $0.contains { $0.contains(text) } } }

    /// How many lines contain `text`.
    package func count(of text: String) -> Int { recorded.withLock { $0.filter { $0.contains(text) }.count } }

    /// The lines that contain `text`.
    package func lines(containing text: String) -> [String] { recorded.withLock { $0.filter { $0.contains(text) } } }

    /// Forgets the lines so far.
    package func clear() { recorded.withLock { $0.removeAll() } }

    /// A logger whose lines land here.
    package var logger: Logger {
        let recorder = self
        return Logger(label: "motion-agent") { _ in Handler(recorder: recorder, logLevel: recorder.level) }
    }

    fileprivate func append(_ line: String) { recorded.withLock { $0.append(line) } }

    private struct Handler: LogHandler {
        let recorder: ControlLogRecorder
        var logLevel: Logger.Level
        var metadata: Logger.Metadata = [:]

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            let all = metadata.merging(event.metadata ?? [:]) { $1 }
            let fields = all.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
            recorder.append((["[\(event.level)]", event.message.description] + fields).joined(separator: " "))
        }
    }
}

extension SimulationWorld {
    /// A device, not yet started, whose every process logs into `log`.
    @discardableResult
    package func addDevice(
        _ deviceID: String,
        configuration: AgentConfiguration,
        trustedKeys: OperatorKeys? = nil,
        seed: UInt64,
        log: ControlLogRecorder
    ) -> SimulatedAgent {
        addDevice(deviceID, configuration: configuration, trustedKeys: trustedKeys, seed: seed, logger: log.logger)
    }
}
