import ServiceLifecycle

/// Records steps and activity in the on-device history once a second, and a last time at shutdown.
final class HistoryService: Service {
    private let history: HistoryRecorder
    private let startup: AgentStartup

    init(history: HistoryRecorder, startup: AgentStartup) {
        self.history = history
        self.startup = startup
    }

    func run() async throws {
        guard await startup.bootCount() != nil else { return }
        await cancelWhenGracefulShutdown { [history] in
            while (try? await Task.sleep(for: .seconds(1))) != nil { history.poll() }
        }
        history.poll(force: true)
    }
}
