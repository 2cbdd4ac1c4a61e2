import AgentConfig

extension SimulationWorld {
    /// The same device after its config.yaml was edited while it was stopped: a new `SimulatedAgent` with the
    /// device's id, keys, seed, logger and `configurationPath`, whose disk holds everything `device`'s held (the
    /// state directory — kept desired documents, command overrides, counters, boot count — and the durable log),
    /// and whose configuration is `configuration`. Start it with `start(_:)`; `device` must not run any more (it
    /// stays in `devices`, stopped, and `device(_:)` still finds it first).
    @discardableResult
    package func addDevice(
        _ device: SimulatedAgent,
        editedConfiguration configuration: AgentConfiguration
    ) -> SimulatedAgent {
        precondition(!device.isRunning, "stop \(device.deviceID) before its config.yaml is edited")
        let next = addDevice(
            device.deviceID,
            configuration: configuration,
            trustedKeys: device.trustedKeys,
            seed: device.seed,
            logger: device.logger
        )
        next.configurationPath = device.configurationPath
        let kept = device.disk.contents.withLock { $0 }
        next.disk.contents.withLock { $0 = kept }
        return next
    }
}
