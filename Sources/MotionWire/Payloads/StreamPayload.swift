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

/// Each case's codec (`Codecs/`): the one place a payload is tied to its wire form. The switches are exhaustive,
/// so a new case does not compile until it has a codec.
extension StreamPayload {
    /// The payload's JSON fields after the envelope (`PayloadEncoder`). Allocation-free.
    @inline(__always)
    func writeFields(into b: inout JSONBuffer) {
        switch self {
        case .acceleration(let v): AccelerationCodec.write(v, into: &b)
        case .rotationRate(let v): RotationRateCodec.write(v, into: &b)
        case .magneticField(let v): MagneticFieldCodec.write(v, into: &b)
        case .deviceMotion(let m): DeviceMotionCodec.write(m, into: &b)
        case .pedometer(let p): PedometerCodec.write(p, into: &b)
        case .pedometerEvent(let e): PedometerEventCodec.write(e, into: &b)
        case .activity(let a): MotionActivityCodec.write(a, into: &b)
        case .altitude(let a): AltitudeCodec.write(a, into: &b)
        case .absoluteAltitude(let a): AbsoluteAltitudeCodec.write(a, into: &b)
        case .submersion(let s): SubmersionCodec.write(s, into: &b)
        }
    }

    /// The payload of a JSON message on a topic of `kind` (`PayloadDecoder`).
    static func read(
        _ kind: PayloadKind,
        _ fields: PayloadFields,
        timestamp t: Double
    ) throws(WireDecodingError) -> StreamPayload {
        switch kind {
        case .accelerometer: .acceleration(try AccelerationCodec.read(fields, timestamp: t))
        case .gyroscope: .rotationRate(try RotationRateCodec.read(fields, timestamp: t))
        case .magnetometer: .magneticField(try MagneticFieldCodec.read(fields, timestamp: t))
        case .deviceMotion: .deviceMotion(try DeviceMotionCodec.read(fields, timestamp: t))
        case .pedometer: .pedometer(try PedometerCodec.read(fields, timestamp: t))
        case .pedometerEvents: .pedometerEvent(try PedometerEventCodec.read(fields, timestamp: t))
        case .activity: .activity(try MotionActivityCodec.read(fields, timestamp: t))
        case .altimeter: .altitude(try AltitudeCodec.read(fields, timestamp: t))
        case .absoluteAltitude: .absoluteAltitude(try AbsoluteAltitudeCodec.read(fields, timestamp: t))
        case .submersion: .submersion(try SubmersionCodec.read(fields, timestamp: t))
        }
    }

    /// One line for a terminal (`watch`): `x=+0.0120 y=-0.0030 z=-0.9990  |a|=0.999 g`, `steps=12 …`.
    public var summary: String {
        switch self {
        case .acceleration(let v): AccelerationCodec.summary(v)
        case .rotationRate(let v): RotationRateCodec.summary(v)
        case .magneticField(let v): MagneticFieldCodec.summary(v)
        case .deviceMotion(let m): DeviceMotionCodec.summary(m)
        case .pedometer(let p): PedometerCodec.summary(p)
        case .pedometerEvent(let e): PedometerEventCodec.summary(e)
        case .activity(let a): MotionActivityCodec.summary(a)
        case .altitude(let a): AltitudeCodec.summary(a)
        case .absoluteAltitude(let a): AbsoluteAltitudeCodec.summary(a)
        case .submersion(let s): SubmersionCodec.summary(s)
        }
    }

    /// The payload's value for tools that print any payload field by field (`sub`): the Core Motion value, or
    /// for the raw sensors their vector under its JSON key.
    public var labelledValue: (label: String?, value: any Sendable) {
        switch self {
        case .acceleration(let v): (AccelerationCodec.key, v)
        case .rotationRate(let v): (RotationRateCodec.key, v)
        case .magneticField(let v): (MagneticFieldCodec.key, v)
        case .deviceMotion(let m): (nil, m)
        case .pedometer(let p): (nil, p)
        case .pedometerEvent(let e): (nil, e)
        case .activity(let a): (nil, a)
        case .altitude(let a): (nil, a)
        case .absoluteAltitude(let a): (nil, a)
        case .submersion(let s): (nil, s)
        }
    }
}
