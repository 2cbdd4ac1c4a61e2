import AgentConfig
import AgentPipeline
import AgentPorts
import MotionWire

/// Re-reads config.yaml for `ControlPlane.reload(trigger:)` (SIGHUP and `reload-config`). Stream settings, the
/// reference frame and the metrics interval apply at once, under the desired layers and command overrides; every
/// other key (the schema's non-runtime part: mqtt, source, device, topics…) needs a restart, and the report says
/// which (`AgentConfiguration.restartRequired(from:)`). An invalid file changes nothing and the failure carries
/// every problem.
package enum ConfigurationReload {
    package static func apply(
        path: String?,
        reconciler: ConfigurationReconciler,
        controller: AgentController
    ) throws(ControlFailure) -> ReloadReport {
        let running = reconciler.base
        guard let path else {
            throw ControlFailure(.conflict, "this agent was started without a configuration file to reload")
        }
        let new: AgentConfiguration
        do {
            new = try ConfigurationLoader.load(file: path)
        } catch {
            throw ControlFailure(.malformed, "\(path) is invalid; the running configuration is kept:\n\(error)")
        }
        var changed: [String] = []
        do {
            // Through the layers: the desired documents and the command overrides of keys config.yaml did not
            // change stay on top of the new file.
            _ = try reconciler.reload(new) { effective in changed = try controller.apply(effective) }
        } catch let failure as ControlFailure {
            throw failure
        } catch {
            throw ControlFailure(.internalFailure, "applying \(path) failed: \(error) — see the agent's log")
        }
        var restart = new.restartRequired(from: running)
        // The durable log is opened at start only when some stream is durable.
        let durable = { (c: AgentConfiguration) in c.streams.values.contains { $0.durable && $0.qos > 0 } }
        if durable(new) && !durable(running) { restart.append("streams.*.durable (the durable outbox)") }
        return ReloadReport(changedStreams: changed, needsRestart: restart)
    }
}
