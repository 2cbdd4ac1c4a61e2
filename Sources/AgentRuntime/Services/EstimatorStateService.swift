import AgentPipeline
import AgentPorts
import ServiceLifecycle

/// Saves what the estimators learned (gyroscope bias, magnetometer calibration) every minute and at
/// shutdown, so it survives a crash at most a minute old. (`AgentLifecycleService` restores it at boot,
/// before any sample.)
final class EstimatorStateService: Service {
    private let controller: AgentController
    private let store: EstimatorStateStore
    private let startup: AgentStartup
    private let clock: any AgentClock

    init(controller: AgentController, store: EstimatorStateStore, startup: AgentStartup, clock: any AgentClock) {
        self.controller = controller
        self.store = store
        self.startup = startup
        self.clock = clock
    }

    func run() async throws {
        guard await startup.bootCount() != nil else { return }
        await cancelWhenGracefulShutdown { [self] in
            while (try? await clock.sleep(seconds: 60)) != nil { self.save() }
        }
        save()
    }

    private func save() {
        if let state = controller.withDeviceMotion({ $0.persistentState }) { store.save(state) }
    }
}
