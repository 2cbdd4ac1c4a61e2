import ServiceLifecycle

/// Records steps and activity in the on-device history once a second, and a last time at shutdown.
final class HistoryService: Service {
    private let context: AgentContext
    private let history: HistoryRecorder

    init(context: AgentContext, history: HistoryRecorder) {
        self.context = context
        self.history = history
    }

    func run() async throws {
        guard await context.startup.bootCount() != nil else { return }
        await cancelWhenGracefulShutdown { [history] in
            while (try? await Task.sleep(for: .seconds(1))) != nil { history.poll() }
        }
        history.poll(force: true)
    }
}
