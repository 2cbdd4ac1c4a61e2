import MotionModel

/// A general 3×3 matrix by rows, for the bias Kalman filter and the magnetometer calibration.
/// Fixed size, so the per-sample update allocates nothing.
struct Matrix3x3: Sendable, Equatable, Codable {
    var r0: Vector3
    var r1: Vector3
    var r2: Vector3

    static let zero = Matrix3x3(r0: .zero, r1: .zero, r2: .zero)
    static let identity = Matrix3x3(diagonal: 1)

    init(r0: Vector3, r1: Vector3, r2: Vector3) {
        self.r0 = r0
        self.r1 = r1
        self.r2 = r2
    }

    init(diagonal d: Double) {
        self.init(r0: Vector3(d, 0, 0), r1: Vector3(0, d, 0), r2: Vector3(0, 0, d))
    }

    init(_ m: RotationMatrix) {
        self.init(r0: Vector3(m.m11, m.m12, m.m13), r1: Vector3(m.m21, m.m22, m.m23), r2: Vector3(m.m31, m.m32, m.m33))
    }

    var c0: Vector3 { Vector3(r0.x, r1.x, r2.x) }
    var c1: Vector3 { Vector3(r0.y, r1.y, r2.y) }
    var c2: Vector3 { Vector3(r0.z, r1.z, r2.z) }

    var transposed: Matrix3x3 { Matrix3x3(r0: c0, r1: c1, r2: c2) }
    var trace: Double { r0.x + r1.y + r2.z }

    @inline(__always)
    static func * (a: Matrix3x3, b: Matrix3x3) -> Matrix3x3 {
        let (b0, b1, b2) = (b.c0, b.c1, b.c2)
        return Matrix3x3(
            r0: Vector3(a.r0.dot(b0), a.r0.dot(b1), a.r0.dot(b2)),
            r1: Vector3(a.r1.dot(b0), a.r1.dot(b1), a.r1.dot(b2)),
            r2: Vector3(a.r2.dot(b0), a.r2.dot(b1), a.r2.dot(b2))
        )
    }

    @inline(__always)
    static func * (a: Matrix3x3, v: Vector3) -> Vector3 { Vector3(a.r0.dot(v), a.r1.dot(v), a.r2.dot(v)) }
    static func * (s: Double, a: Matrix3x3) -> Matrix3x3 { Matrix3x3(r0: s * a.r0, r1: s * a.r1, r2: s * a.r2) }
    static func + (a: Matrix3x3, b: Matrix3x3) -> Matrix3x3 {
        Matrix3x3(r0: a.r0 + b.r0, r1: a.r1 + b.r1, r2: a.r2 + b.r2)
    }
    static func - (a: Matrix3x3, b: Matrix3x3) -> Matrix3x3 {
        Matrix3x3(r0: a.r0 - b.r0, r1: a.r1 - b.r1, r2: a.r2 - b.r2)
    }

    var determinant: Double { r0.dot(r1.cross(r2)) }

    /// The inverse, or all zeros when |det| ≤ machine epsilon (vqf.cpp `matrix3Inv` does the same, which
    /// turns a degenerate Kalman update into no update).
    var inverse: Matrix3x3 {
        let det = determinant
        guard abs(det) > Double.ulpOfOne else { return .zero }
        // The columns of the adjugate are the cross products of the rows.
        let a = r1.cross(r2)
        let b = r2.cross(r0)
        let c = r0.cross(r1)
        return Matrix3x3(r0: Vector3(a.x, b.x, c.x), r1: Vector3(a.y, b.y, c.y), r2: Vector3(a.z, b.z, c.z)) * (1 / det)
    }

    static func * (a: Matrix3x3, s: Double) -> Matrix3x3 { s * a }

    /// Largest absolute row sum, an upper bound on the largest eigenvalue (Gershgorin).
    var maxAbsoluteRowSum: Double {
        func s(_ v: Vector3) -> Double { abs(v.x) + abs(v.y) + abs(v.z) }
        return max(s(r0), max(s(r1), s(r2)))
    }
}
