import Logging
import Synchronization

/// A log handler that keeps each line (message and metadata) for a test to read.
final class RecordingLogHandler: LogHandler, Sendable {
    private let recorded = Mutex<[String]>([])
    var lines: [String] { recorded.withLock { $0 } }

    var metadata: Logger.Metadata {
        get { [:] }
        set {}
    }
    var logLevel: Logger.Level {
        get { .trace }
        set {}
    }
    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { nil }
        set {}
    }

    func log(event: LogEvent) {
        let metadata = (event.metadata ?? [:]).sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
        recorded.withLock { $0.append(([event.message.description] + metadata).joined(separator: " ")) }
    }
}
