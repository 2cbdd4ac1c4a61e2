/// What asked for config.yaml to be re-read: both enter through `ControlPlane.reload(trigger:)`.
package enum ReloadTrigger: String, Sendable, Equatable {
    /// SIGHUP.
    case hangup
    /// The `reload-config` command.
    case command
}
