import AgentConfig
import AgentPipeline
import AgentPorts
import MotionWire

/// Re-reads config.yaml for `ControlPlane.reload(trigger:)` (SIGHUP and `reload-config`). Stream settings, the
/// reference frame and the metrics interval apply at once, under the desired layers and command overrides; sections that shape connections or hardware (mqtt, source, device,
/// topics…) need a restart, and the report says which. An invalid file changes nothing and the failure carries
/// every problem.
public enum ConfigurationReload {
    public static func apply(
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
            _ = try reconciler.reload(new) { effective in changed = try controller.applyReloaded(effective) }
        } catch let failure as ControlFailure {
            throw failure
        } catch {
            throw ControlFailure(.internalFailure, "applying \(path) failed: \(error) — see the agent's log")
        }
        var restart: [String] = []
        if new.device != running.device { restart.append("device") }
        if new.agent != running.agent { restart.append("agent") }
        if new.source != running.source { restart.append("source") }
        if new.mqtt != running.mqtt { restart.append("mqtt") }
        if new.topics != running.topics { restart.append("topics") }
        if new.control != running.control { restart.append("control") }
        if new.location != running.location { restart.append("location") }
        if new.pedometer != running.pedometer { restart.append("pedometer") }
        if new.altimeter != running.altimeter { restart.append("altimeter") }
        if new.submersion != running.submersion { restart.append("submersion") }
        if new.outbox != running.outbox { restart.append("outbox") }
        if new.metrics.prometheusFile != running.metrics.prometheusFile { restart.append("metrics.prometheus_file") }
        // The durable log is opened at start only when some stream is durable.
        let durable = { (c: AgentConfiguration) in c.streams.values.contains { $0.durable && $0.qos > 0 } }
        if durable(new) && !durable(running) { restart.append("streams.*.durable (the durable outbox)") }
        return ReloadReport(changedStreams: changed, needsRestart: restart)
    }
}
