import AgentPipeline
import AgentPorts
import ServiceLifecycle

/// Saves what the estimators learned (gyroscope bias, magnetometer calibration) every minute and at
/// shutdown, so it survives a crash at most a minute old (`AgentLifecycleService` restores it at boot,
/// before any sample), and the fall awaiting a resolution as soon as the events stream records it
/// (`PendingFallKeeper`): the disk is written here, never on the per-sample path.
final class EstimatorStateService: Service {
    private let controller: AgentController
    private let store: EstimatorStateStore
    private let pendingFalls: PendingFallKeeper
    private let startup: AgentStartup
    private let clock: any AgentClock

    init(
        controller: AgentController,
        store: EstimatorStateStore,
        pendingFalls: PendingFallKeeper,
        startup: AgentStartup,
        clock: any AgentClock
    ) {
        self.controller = controller
        self.store = store
        self.pendingFalls = pendingFalls
        self.startup = startup
        self.clock = clock
    }

    func run() async throws {
        guard await startup.bootCount() != nil else { return }
        await cancelWhenGracefulShutdown { [self] in
            await withDiscardingTaskGroup { group in
                group.addTask { await self.pendingFalls.run() }
                group.addTask { while (try? await self.clock.sleep(seconds: 60)) != nil { self.save() } }
            }
        }
        save()
        // Acquisition has stopped (it shuts down before this service): nothing records after this.
        pendingFalls.flush()
    }

    private func save() {
        if let state = controller.withDeviceMotion({ $0.persistentState }) { store.save(state) }
    }
}
