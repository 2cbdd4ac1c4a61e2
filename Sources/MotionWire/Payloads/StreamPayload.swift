import AgentPorts
import MotionModel

/// What one stream message says, as Core Motion's types. Dates that the agent keeps on the sensor clock
/// (`startDate`, `endDate`, an event's `date`) are wall-clock Unix seconds here, as on the wire; the values that
/// carry their own `timestamp` (device motion, altitude, submersion) have the envelope's.
public enum StreamPayload: Sendable, Equatable {
    /// `{root}/accelerometer`: g, Core Motion's sign.
    case acceleration(Vector3)
    /// `{root}/gyroscope`: rad/s, raw.
    case rotationRate(Vector3)
    /// `{root}/magnetometer`: µT, raw.
    case magneticField(Vector3)
    case deviceMotion(DeviceMotion)
    case pedometer(PedometerData)
    case pedometerEvent(PedometerEvent)
    case activity(MotionActivity)
    case altitude(AltitudeData)
    case absoluteAltitude(AbsoluteAltitudeData)
    case submersion(SubmersionData)

    /// The kind of topic the payload is published on.
    public var kind: PayloadKind {
        switch self {
        case .acceleration: .accelerometer
        case .rotationRate: .gyroscope
        case .magneticField: .magnetometer
        case .deviceMotion: .deviceMotion
        case .pedometer: .pedometer
        case .pedometerEvent: .pedometerEvents
        case .activity: .activity
        case .altitude: .altimeter
        case .absoluteAltitude: .absoluteAltitude
        case .submersion: .submersion
        }
    }
}
