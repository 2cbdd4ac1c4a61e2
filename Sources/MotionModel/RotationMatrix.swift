/// A 3×3 rotation matrix, rows `m1x`, `m2x`, `m3x` (Core Motion's `CMRotationMatrix` field names).
///
/// Built from a quaternion `q` it is the same rotation: `matrix * v == q.rotate(v)`. For an attitude
/// (device → reference) the columns are the device axes in reference coordinates and the third row is
/// the reference's up axis in device coordinates, so gravity in device axes is `−(m31, m32, m33)`.
/// `transposed` is the reference → device matrix.
public struct RotationMatrix: Sendable, Hashable, Codable {
    public var m11: Double, m12: Double, m13: Double
    public var m21: Double, m22: Double, m23: Double
    public var m31: Double, m32: Double, m33: Double

    @inlinable
    public init(
        m11: Double,
        m12: Double,
        m13: Double,
        m21: Double,
        m22: Double,
        m23: Double,
        m31: Double,
        m32: Double,
        m33: Double
    ) {
        self.m11 = m11
        self.m12 = m12
        self.m13 = m13
        self.m21 = m21
        self.m22 = m22
        self.m23 = m23
        self.m31 = m31
        self.m32 = m32
        self.m33 = m33
    }

    public static let identity = RotationMatrix(m11: 1, m12: 0, m13: 0, m21: 0, m22: 1, m23: 0, m31: 0, m32: 0, m33: 1)

    /// The matrix of `q` (normalised here, so a slightly denormalised quaternion still gives a rotation).
    @inlinable
    public init(_ q: Quaternion) {
        let u = q.normalized
        let (w, x, y, z) = (u.w, u.x, u.y, u.z)
        self.init(
            m11: 1 - 2 * (y * y + z * z),
            m12: 2 * (x * y - w * z),
            m13: 2 * (x * z + w * y),
            m21: 2 * (x * y + w * z),
            m22: 1 - 2 * (x * x + z * z),
            m23: 2 * (y * z - w * x),
            m31: 2 * (x * z - w * y),
            m32: 2 * (y * z + w * x),
            m33: 1 - 2 * (x * x + y * y)
        )
    }

    /// The unit quaternion of this matrix, `w ≥ 0` (Shepperd's method: pivot on the largest of the trace
    /// and the diagonal, so no branch divides by a small number).
    @inlinable
    public var quaternion: Quaternion {
        let trace = m11 + m22 + m33
        let q: Quaternion
        if trace >= m11, trace >= m22, trace >= m33 {
            let s = 2 * (1 + trace).squareRoot()
            q = Quaternion(w: s / 4, x: (m32 - m23) / s, y: (m13 - m31) / s, z: (m21 - m12) / s)
        } else if m11 >= m22, m11 >= m33 {
            let s = 2 * (1 + m11 - m22 - m33).squareRoot()
            q = Quaternion(w: (m32 - m23) / s, x: s / 4, y: (m12 + m21) / s, z: (m13 + m31) / s)
        } else if m22 >= m33 {
            let s = 2 * (1 + m22 - m11 - m33).squareRoot()
            q = Quaternion(w: (m13 - m31) / s, x: (m12 + m21) / s, y: s / 4, z: (m23 + m32) / s)
        } else {
            let s = 2 * (1 + m33 - m11 - m22).squareRoot()
            q = Quaternion(w: (m21 - m12) / s, x: (m13 + m31) / s, y: (m23 + m32) / s, z: s / 4)
        }
        let n = q.normalized
        return n.w < 0 ? Quaternion(w: -n.w, x: -n.x, y: -n.y, z: -n.z) : n
    }

    @inlinable
    public var transposed: RotationMatrix {
        RotationMatrix(m11: m11, m12: m21, m13: m31, m21: m12, m22: m22, m23: m32, m31: m13, m32: m23, m33: m33)
    }

    @inlinable
    public static func * (a: RotationMatrix, v: Vector3) -> Vector3 {
        Vector3(
            a.m11 * v.x + a.m12 * v.y + a.m13 * v.z,
            a.m21 * v.x + a.m22 * v.y + a.m23 * v.z,
            a.m31 * v.x + a.m32 * v.y + a.m33 * v.z
        )
    }

    @inlinable
    public static func * (a: RotationMatrix, b: RotationMatrix) -> RotationMatrix {
        RotationMatrix(
            m11: a.m11 * b.m11 + a.m12 * b.m21 + a.m13 * b.m31,
            m12: a.m11 * b.m12 + a.m12 * b.m22 + a.m13 * b.m32,
            m13: a.m11 * b.m13 + a.m12 * b.m23 + a.m13 * b.m33,
            m21: a.m21 * b.m11 + a.m22 * b.m21 + a.m23 * b.m31,
            m22: a.m21 * b.m12 + a.m22 * b.m22 + a.m23 * b.m32,
            m23: a.m21 * b.m13 + a.m22 * b.m23 + a.m23 * b.m33,
            m31: a.m31 * b.m11 + a.m32 * b.m21 + a.m33 * b.m31,
            m32: a.m31 * b.m12 + a.m32 * b.m22 + a.m33 * b.m32,
            m33: a.m31 * b.m13 + a.m32 * b.m23 + a.m33 * b.m33
        )
    }
}
