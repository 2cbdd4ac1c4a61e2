import AgentPorts
import ServiceLifecycle

/// Records steps and activity in the on-device history once a second while the pedometer or the activity
/// stream is on (every 5 s, only to notice one being switched on, while both are off), and a last time at
/// shutdown.
final class HistoryService: Service {
    private let history: HistoryRecorder
    private let startup: AgentStartup
    private let clock: any AgentClock

    init(history: HistoryRecorder, startup: AgentStartup, clock: any AgentClock) {
        self.history = history
        self.startup = startup
        self.clock = clock
    }

    func run() async throws {
        guard await startup.bootCount() != nil else { return }
        await cancelWhenGracefulShutdown { [history, clock] in
            while (try? await clock.sleep(seconds: history.isRecording ? 1 : 5)) != nil { history.poll() }
        }
        history.poll(force: true)
    }
}
