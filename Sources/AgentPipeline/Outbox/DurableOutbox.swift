import AgentConfig
import AgentPorts
import Logging
import Synchronization

/// The durable log as the configuration in force asks for it. `durable` is a runtime setting: a desired
/// document, a command or a reload can make a stream durable, and the log must then be open — not only when
/// config.yaml says so at start. So the controller calls `prepare(for:)` with every configuration it is about to
/// run (at start, and before each change): the first that makes a stream durable opens the log and hands it to
/// the publisher, and from then on durable streams' messages go to the staging ring and the log. A log left on
/// disk by an earlier run is opened at start whatever the configuration says, so its records still go out.
///
/// Once open the log stays open for the run (its records drain even if no stream is durable any more). When it
/// cannot be opened, `problem` says why, the streams keep their messages in memory, and the status says the
/// setting is not in force (`notes(for:)`), so the agent never claims a durability it does not have.
package final class DurableOutbox: Sendable {
    package struct Settings: Sendable {
        /// `outbox.max_bytes`, `outbox.max_age_s`, `outbox.replay_rate`.
        package var maxBytes: Int
        package var maxAgeSeconds: Double
        package var replayRate: Double

        package init(maxBytes: Int, maxAgeSeconds: Double, replayRate: Double) {
            self.maxBytes = maxBytes
            self.maxAgeSeconds = maxAgeSeconds
            self.replayRate = replayRate
        }

        package init(_ outbox: OutboxSettings) {
            self.init(
                maxBytes: outbox.maxBytes,
                maxAgeSeconds: Double(outbox.maxAgeSeconds),
                replayRate: Double(outbox.replayRate)
            )
        }
    }

    private enum Phase {
        case closed
        case open
        /// Opening failed; tried again at the next change that asks for it.
        case failed(String)
    }

    private struct State {
        var phase = Phase.closed
        var publisher: OutboxPublisher?
        var checkedLeftovers = false
    }

    private let state: any StateDirectory
    private let settings: Settings
    /// The ring durable streams' messages are staged in (the memory outbox's `durableStaging`).
    package let staging: Outbox
    private let memory: Outbox
    private let clock: any AgentClock
    private let logger: Logger
    private let locked = Mutex(State())

    /// - Parameters:
    ///   - memory: the memory outbox, whose `durableStaging` is `staging` (created with `routesDurable: false`).
    package init(
        state: any StateDirectory,
        settings: Settings,
        staging: Outbox,
        memory: Outbox,
        clock: any AgentClock = SystemClock(),
        logger: Logger
    ) {
        self.state = state
        self.clock = clock
        self.settings = settings
        self.staging = staging
        self.memory = memory
        self.logger = logger
    }

    /// The publisher that sends the log's records; `prepare` opens the log only once it has one.
    package func attach(_ publisher: OutboxPublisher) {
        locked.withLock { $0.publisher = publisher }
    }

    /// Whether the log is open.
    package var isOpen: Bool {
        locked.withLock { if case .open = $0.phase { true } else { false } }
    }

    /// Why the log is not open though the configuration asked for it; nil when it is open or was never needed.
    package var problem: String? {
        locked.withLock { if case .failed(let problem) = $0.phase { problem } else { nil } }
    }

    /// Opens the log if `configuration` makes a stream durable (or, the first time, if an earlier run left
    /// records) and it is not open yet. Never throws: a failure is logged once per attempt and kept in `problem`.
    package func prepare(for configuration: AgentConfiguration) {
        locked.withLock { current in
            if case .open = current.phase { return }
            guard let publisher = current.publisher else { return }
            var reason = Self.durableStreams(configuration).isEmpty ? nil : "a stream is durable"
            if reason == nil, !current.checkedLeftovers {
                current.checkedLeftovers = true
                if let storage = try? state.segmentStorage(), !storage.segmentNames().isEmpty {
                    reason = "records of an earlier run are on disk"
                }
            }
            guard reason != nil else { return }
            do {
                let log = try DurableLog(
                    storage: state.segmentStorage(),
                    maxBytes: settings.maxBytes,
                    maxAgeSeconds: settings.maxAgeSeconds,
                    clock: clock,
                    logger: logger
                )
                publisher.attachDurable(
                    OutboxPublisher.Durable(staging: staging, log: log, replayRate: settings.replayRate)
                )
                memory.routeDurableMessages()
                current.phase = .open
            } catch {
                let problem = "the durable log cannot be opened: \(error)"
                logger.error("\(problem) — durable streams are kept in memory only")
                current.phase = .failed(problem)
            }
        }
    }

    /// Notes for the configuration's account (`ConfigurationStatus.Setting.note`): each durable setting that is
    /// not in force, and why.
    package func notes(for configuration: AgentConfiguration) -> [String: String] {
        let open = isOpen
        guard !open else { return [:] }
        let why = problem ?? "the durable log is not open"
        var notes: [String: String] = [:]
        for name in Self.durableStreams(configuration) {
            notes["streams.\(name.rawValue).durable"] = "not in force: \(why); messages are kept in memory only"
        }
        return notes
    }

    /// The enabled streams whose messages must survive a restart: durable with QoS above 0.
    static func durableStreams(_ configuration: AgentConfiguration) -> [StreamName] {
        StreamName.allCases.filter {
            let settings = configuration[stream: $0]
            return settings.enabled && settings.durable && settings.qos > 0
        }
    }
}
