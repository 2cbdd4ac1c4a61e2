/// The reference frame an attitude is expressed in, with Core Motion's `CMAttitudeReferenceFrame` names.
///
/// All four have z vertical (up). They differ in where x points and what the magnetometer does:
/// - `xArbitraryZVertical`: gyroscope and accelerometer only; yaw 0 at start, yaw drifts slowly.
/// - `xArbitraryCorrectedZVertical`: the magnetometer removes the yaw drift; yaw still 0 at start.
/// - `xMagneticNorthZVertical`: x points to magnetic north, y west, z up (North-West-Up).
/// - `xTrueNorthZVertical`: x points to geographic north (magnetic north turned by the declination).
public enum AttitudeReferenceFrame: String, CaseIterable, Sendable, Hashable, Codable {
    case xArbitraryZVertical
    case xArbitraryCorrectedZVertical
    case xMagneticNorthZVertical
    case xTrueNorthZVertical

    /// Whether the frame needs a magnetometer.
    public var needsMagnetometer: Bool { self != .xArbitraryZVertical }

    /// Whether x points to a north (the frames in which `DeviceMotion.heading` is defined).
    public var isNorthReferenced: Bool { self == .xMagneticNorthZVertical || self == .xTrueNorthZVertical }
}
