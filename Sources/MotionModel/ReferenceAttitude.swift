/// An attitude captured (or given) as the zero of the relative attitude, with when it was set: Core Motion's
/// cached `CMAttitude` that an app passes to `multiply(byInverseOf:)` for every later sample.
///
/// The quaternion is kept normalised, so its inverse is its conjugate and `relative(_:)` is one Hamilton
/// product per sample, allocating nothing.
public struct ReferenceAttitude: Sendable, Hashable, Codable {
    /// The reference attitude, device → reference frame, of unit norm.
    public let quaternion: Quaternion
    /// When it was set, Unix seconds (a `set-reference-attitude` command, or the first time a desired document
    /// or config.yaml asked for this quaternion).
    public let time: Double

    /// `quaternion` is normalised here; callers validate it first (finite, non-zero norm), as the config schema
    /// does (`ConfigurationField.referenceAttitude`).
    public init(quaternion: Quaternion, time: Double) {
        self.quaternion = quaternion.normalized
        self.time = time
    }

    /// The attitude change from this reference to `attitude`: `reference⁻¹ ⊗ attitude`, as in Core Motion's
    /// `attitude.multiply(byInverseOf: reference)`.
    @inlinable
    public func relative(_ attitude: Quaternion) -> RelativeAttitude {
        RelativeAttitude(quaternion: attitude.multiplied(byInverseOf: quaternion), referenceTime: time)
    }
}
