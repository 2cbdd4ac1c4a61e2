/// Device motion's attitude relative to a `ReferenceAttitude`, published as `relativeAttitude` beside the
/// absolute `attitude` while a reference is set.
///
/// `quaternion` rotates the device's current axes into the device's axes at the reference pose: a vector `v`
/// in current device axes is `quaternion.rotate(v)` in the axes the device had at the reference. It is the
/// identity (roll, pitch and yaw 0) while the device is in the reference pose, whatever that pose is.
public struct RelativeAttitude: Sendable, Hashable, Codable {
    public var quaternion: Quaternion
    /// When the reference was set, Unix seconds.
    public var referenceTime: Double

    @inlinable
    public init(quaternion: Quaternion, referenceTime: Double) {
        self.quaternion = quaternion
        self.referenceTime = referenceTime
    }
}
