import AgentConfig
import AgentPorts
import Foundation
import MotionModel

/// The commands an operator can send, with their arguments already type-checked. Names, help, parsing and
/// handling live in `ControlCommandDescriptor.table`.
public enum ControlCommand: Sendable, Equatable {
    case start(StreamName)
    case stop(StreamName)
    /// Hz; from `rate_hz` or `1 / interval_s`.
    case setRate(StreamName, rateHz: Double)
    case setQoS(StreamName, qos: Int)
    case setRetain(StreamName, retain: Bool)
    /// Samples per message, and their encoding (nil keeps the current one).
    case setBatch(StreamName, batch: Int, encoding: StreamEncoding?)
    case setReferenceFrame(AttitudeReferenceFrame)
    /// The reference `relativeAttitude` is relative to: the given quaternion (w, x, y, z, not yet normalised),
    /// or nil to capture device motion's current attitude.
    case setReferenceAttitude(Quaternion?)
    case clearReferenceAttitude
    case resetPedometer
    case reloadConfig
    /// Core Motion's queryPedometerData(from:to:), Unix seconds.
    case queryPedometer(from: Double, to: Double)
    /// Core Motion's queryActivityStarting(from:to:), Unix seconds.
    case queryActivity(from: Double, to: Double)
    case status
    case listStreams
    case ping
}
