import AgentConfig
import AgentPorts
import Foundation
import MotionModel
import MotionWire

/// A command as the door carries it out, its arguments already checked. A command that changes settings
/// (start, stop, set-*) is the settings it sets: runtime keys checked by the config schema as it was parsed —
/// the one check, the one representation a setting change has from here to the configuration's layers. Names,
/// help and parsing live in `ControlCommandDescriptor.table`.
package enum ControlCommand: Sendable, Equatable {
    /// Sets runtime keys as this command's overrides on top of the desired layers; the reply shows `stream`'s
    /// resulting state.
    case configure(ConfigurationOverlay, stream: StreamName)
    /// `set-reference-attitude` without a quaternion: device motion's current attitude becomes the reference.
    case captureReferenceAttitude
    case resetPedometer
    /// `confirm-fall`, `dismiss-fall`: an operator's resolution of the fall awaiting one — only the fall of impact
    /// `date` (Unix seconds, as the events stream published it) when one is given.
    case resolveFall(FallDetectionEvent.Resolution, date: Double?)
    case reloadConfig
    /// Core Motion's queryPedometerData(from:to:), Unix seconds.
    case queryPedometer(from: Double, to: Double)
    /// Core Motion's queryActivityStarting(from:to:), Unix seconds.
    case queryActivity(from: Double, to: Double)
    case status
    case listStreams
    case ping

    /// The command that sets `values` (key → value as config.yaml writes it) of `stream`'s section, or the
    /// schema's refusal of a value as a bad command.
    package static func configuring(
        _ stream: StreamName,
        _ values: [String: String]
    ) -> Result<ControlCommand, ControlFailure> {
        var written: [String: String] = [:]
        for (key, value) in values { written["streams.\(stream.rawValue).\(key)"] = value }
        do {
            return .success(
                .configure(try ConfigurationOverlay(validating: written, source: "command"), stream: stream)
            )
        } catch {
            return .failure(ControlFailure(.malformed, "\(error)"))
        }
    }
}
