import AgentPipeline
import ServiceLifecycle

/// Saves what the estimators learned (gyroscope bias, magnetometer calibration) every minute and at
/// shutdown, so it survives a crash at most a minute old. (`AgentLifecycleService` restores it at boot,
/// before any sample.)
final class EstimatorStateService: Service {
    private let controller: AgentController
    private let store: EstimatorStateStore
    private let startup: AgentStartup

    init(controller: AgentController, store: EstimatorStateStore, startup: AgentStartup) {
        self.controller = controller
        self.store = store
        self.startup = startup
    }

    func run() async throws {
        guard await startup.bootCount() != nil else { return }
        await cancelWhenGracefulShutdown { [self] in
            while (try? await Task.sleep(for: .seconds(60))) != nil { self.save() }
        }
        save()
    }

    private func save() {
        if let state = controller.withDeviceMotion({ $0.persistentState }) { store.save(state) }
    }
}
