import AgentConfig
import AgentControl

extension SimulationWorld {
    /// The same device with an edited config.yaml, as an operator who changes the file and restarts the agent
    /// sees it: a new `SimulatedAgent` with `configuration`, on a disk holding exactly what `device`'s holds now
    /// (state files, the durable log and its cursor, written back or not), with `device`'s keys, seed and
    /// logger. Not started; `device` must not be running (its process has ended: `terminate`, `kill`, a power cut),
    /// and is not started again — the new one is the device from now on (`devices` keeps both, the first one's
    /// process ended).
    @discardableResult
    package func addDevice(reconfiguring device: SimulatedAgent, configuration: AgentConfiguration) -> SimulatedAgent {
        precondition(!device.isRunning, "stop \(device.deviceID) (terminate, kill) before it is reconfigured")
        let next = addDevice(
            device.deviceID,
            configuration: configuration,
            trustedKeys: device.trustedKeys,
            seed: device.seed,
            logger: device.logger
        )
        let kept = device.disk.contents.withLock { $0 }
        next.disk.contents.withLock { contents in
            contents = kept
            // The old device's handles stay retired: the copy starts a generation of its own.
            contents.generation += 1
        }
        next.configurationPath = device.configurationPath
        return next
    }
}
