import ServiceLifecycle

/// Saves what the estimators learned (gyroscope bias, magnetometer calibration) every minute and at
/// shutdown, so it survives a crash at most a minute old. (`AgentLifecycleService` restores it at boot,
/// before any sample.)
final class EstimatorStateService: Service {
    private let context: AgentContext

    init(context: AgentContext) {
        self.context = context
    }

    func run() async throws {
        guard await context.startup.bootCount() != nil else { return }
        await cancelWhenGracefulShutdown { [self] in
            while (try? await Task.sleep(for: .seconds(60))) != nil { self.save() }
        }
        save()
    }

    private func save() {
        if let state = context.controller.withDeviceMotion({ $0.persistentState }) {
            context.estimatorStore.save(state)
        }
    }
}
