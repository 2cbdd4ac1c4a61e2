#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A rotation as a unit quaternion, Hamilton convention, scalar `w`.
///
/// Core Motion's attitude is the rotation from the device frame to the reference frame: a vector `v`
/// in device axes is `q ⊗ v ⊗ q⁻¹` in reference axes.
public struct Quaternion: Sendable, Hashable, Codable {
    public var w: Double
    public var x: Double
    public var y: Double
    public var z: Double

    @inlinable
    public init(w: Double, x: Double, y: Double, z: Double) {
        self.w = w
        self.x = x
        self.y = y
        self.z = z
    }

    public static let identity = Quaternion(w: 1, x: 0, y: 0, z: 0)

    /// The rotation by `angle` radians about `axis` (normalised here).
    @inlinable
    public init(axis: Vector3, angle: Double) {
        let n = axis.norm
        guard n > 0 else {
            self = .identity
            return
        }
        let s = sin(angle / 2) / n
        self.init(w: cos(angle / 2), x: axis.x * s, y: axis.y * s, z: axis.z * s)
    }

    @inlinable public var norm: Double { (w * w + x * x + y * y + z * z).squareRoot() }
    @inlinable public var conjugate: Quaternion { Quaternion(w: w, x: -x, y: -y, z: -z) }
    @inlinable public var isFinite: Bool { w.isFinite && x.isFinite && y.isFinite && z.isFinite }

    @inlinable
    public var normalized: Quaternion {
        let n = norm
        return n > 0 ? Quaternion(w: w / n, x: x / n, y: y / n, z: z / n) : .identity
    }

    /// Hamilton product `a ⊗ b`: first rotate by `b`, then by `a`.
    @inlinable
    public static func * (a: Quaternion, b: Quaternion) -> Quaternion {
        Quaternion(
            w: a.w * b.w - a.x * b.x - a.y * b.y - a.z * b.z,
            x: a.w * b.x + a.x * b.w + a.y * b.z - a.z * b.y,
            y: a.w * b.y - a.x * b.z + a.y * b.w + a.z * b.x,
            z: a.w * b.z + a.x * b.y - a.y * b.x + a.z * b.w
        )
    }

    /// `q ⊗ v ⊗ q⁻¹`: `v` expressed in the frame this rotation maps into.
    @inlinable
    public func rotate(_ v: Vector3) -> Vector3 {
        // t = 2 (u × v); v' = v + w t + u × t  (the two-cross-product form, 15 multiplies)
        let u = Vector3(x, y, z)
        let t = 2 * u.cross(v)
        return v + w * t + u.cross(t)
    }

    /// `q⁻¹ ⊗ v ⊗ q`: `v` brought back into the frame this rotation maps from.
    @inlinable
    public func inverseRotate(_ v: Vector3) -> Vector3 { conjugate.rotate(v) }

    /// The smallest angle between two attitudes, in radians.
    @inlinable
    public func angle(to other: Quaternion) -> Double {
        let d = abs(w * other.w + x * other.x + y * other.y + z * other.z)
        return 2 * acos(Swift.min(1, d))
    }
}
