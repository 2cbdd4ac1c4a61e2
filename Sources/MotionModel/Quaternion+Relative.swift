/// Core Motion's `CMAttitude.multiply(byInverseOf:)`.
extension Quaternion {
    /// The attitude change from `reference` to this attitude: `reference⁻¹ ⊗ self`.
    ///
    /// Apple documents that the method "multiplies the inverse of the specified `CMAttitude` object by the
    /// attitude represented by the receiving object", so the inverse stands on the left. With attitudes that
    /// map device axes into the reference frame, the product maps the current device axes into the device axes
    /// at `reference`: the change is expressed in the reference pose's own axes, not in the world frame
    /// (`self ⊗ reference⁻¹` would be the same change seen from the world, and differs unless the two commute).
    /// Both operands are taken as unit quaternions (attitudes are).
    @inlinable
    public func multiplied(byInverseOf reference: Quaternion) -> Quaternion {
        reference.conjugate * self
    }
}
