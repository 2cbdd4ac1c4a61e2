import MotionModel

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Hard- and soft-iron models fitted to a set of raw magnetometer samples.
///
/// The model: `raw = S · field + offset` with `S` symmetric positive definite (soft iron) and `offset` the
/// hard iron; the calibrated field is `W · (raw − offset)` with `W ∝ S⁻¹` scaled to keep the volume (det W
/// = 1), so the calibrated norm is the field's norm up to that one scale.
struct MagnetometerFit: Sendable, Equatable, Codable {
    /// Hard iron, µT.
    var offset: Vector3
    /// Soft-iron correction, det = 1.
    var softIron: Matrix3x3
    /// Norm of the calibrated field over the fitted samples, µT.
    var radius: Double
    /// RMS of (|calibrated| − radius) / radius over the fitted samples.
    var relativeResidual: Double

    static let identity = MagnetometerFit(offset: .zero, softIron: .identity, radius: 0, relativeResidual: .infinity)

    @inline(__always)
    func calibrate(_ raw: Vector3) -> Vector3 { softIron * (raw - offset) }

    /// Least-squares sphere: |m|² = 2 c·m + k, linear in (c, k). Nil with fewer than 4 samples or a
    /// degenerate spread.
    static func sphere(_ bins: MagnetometerSampleBins) -> MagnetometerFit? {
        guard bins.count >= 4 else { return nil }
        var system = LinearSystem(size: 4)
        for i in 0..<MagnetometerSampleBins.cellCount where bins.filled & (UInt64(1) << UInt64(i)) != 0 {
            let m = bins.samples[i]
            system.accumulate(row: (2 * m.x, 2 * m.y, 2 * m.z, 1, 0, 0, 0, 0, 0), value: m.squaredNorm)
        }
        guard let x = system.solve() else { return nil }
        let c = Vector3(x[0], x[1], x[2])
        let r2 = x[3] + c.squaredNorm
        guard r2 > 0, c.isFinite else { return nil }
        return finish(
            MagnetometerFit(offset: c, softIron: .identity, radius: r2.squareRoot(), relativeResidual: 0),
            bins
        )
    }

    /// Least-squares ellipsoid: a x² + b y² + c z² + 2d xy + 2e xz + 2f yz + 2g x + 2h y + 2i z = 1. Nil
    /// with fewer than 12 samples, or when the quadric is not an ellipsoid.
    static func ellipsoid(_ bins: MagnetometerSampleBins, around center: Vector3) -> MagnetometerFit? {
        guard bins.count >= 12 else { return nil }
        // Centring on a previous estimate keeps the system well conditioned.
        var system = LinearSystem(size: 9)
        for i in 0..<MagnetometerSampleBins.cellCount where bins.filled & (UInt64(1) << UInt64(i)) != 0 {
            let m = bins.samples[i] - center
            system.accumulate(
                row: (
                    m.x * m.x, m.y * m.y, m.z * m.z, 2 * m.x * m.y, 2 * m.x * m.z, 2 * m.y * m.z, 2 * m.x, 2 * m.y,
                    2 * m.z
                ),
                value: 1
            )
        }
        guard let p = system.solve() else { return nil }
        let a = Matrix3x3(
            r0: Vector3(p[0], p[3], p[4]),
            r1: Vector3(p[3], p[1], p[5]),
            r2: Vector3(p[4], p[5], p[2])
        )
        let linear = Vector3(p[6], p[7], p[8])
        // (m − c)ᵀ A (m − c) = 1 + cᵀ A c with c = −A⁻¹ linear.
        let inv = a.inverse
        guard inv != .zero else { return nil }
        let c = -1 * (inv * linear)
        let scale = 1 + c.dot(a * c)
        guard scale > 0 else { return nil }
        let m = (1 / scale) * a
        guard let root = SymmetricEigen(m).squareRoot else { return nil }
        let det = root.determinant
        guard det > 0 else { return nil }
        // W = M^½ / det(M^½)^⅓ has det 1; the radius is then det(M^½)^(−⅓).
        let k = 1 / cbrt(det)
        return finish(MagnetometerFit(offset: c + center, softIron: k * root, radius: 1 / k, relativeResidual: 0), bins)
    }

    /// Radius as the mean calibrated norm and the relative RMS residual.
    static func evaluate(_ fit: MagnetometerFit, _ bins: MagnetometerSampleBins) -> MagnetometerFit? {
        finish(fit, bins)
    }

    private static func finish(_ fit: MagnetometerFit, _ bins: MagnetometerSampleBins) -> MagnetometerFit? {
        var sum = 0.0
        var sum2 = 0.0
        var n = 0.0
        for i in 0..<MagnetometerSampleBins.cellCount where bins.filled & (UInt64(1) << UInt64(i)) != 0 {
            let r = fit.calibrate(bins.samples[i]).norm
            sum += r
            sum2 += r * r
            n += 1
        }
        let mean = sum / n
        guard mean > 0, mean.isFinite else { return nil }
        let variance = max(0, sum2 / n - mean * mean)
        var out = fit
        out.radius = mean
        out.relativeResidual = variance.squareRoot() / mean
        return out
    }
}

/// Normal equations AᵀA x = Aᵀb of up to 9 unknowns, accumulated row by row; fixed size.
struct LinearSystem: Sendable {
    let size: Int
    var ata = InlineArray<81, Double>(repeating: 0)
    var atb = InlineArray<9, Double>(repeating: 0)

    init(size: Int) { self.size = size }

    mutating func accumulate(
        row r: (Double, Double, Double, Double, Double, Double, Double, Double, Double),
        value: Double
    ) {
        let v = InlineArray<9, Double> { i in
            switch i {
            case 0: r.0
            case 1: r.1
            case 2: r.2
            case 3: r.3
            case 4: r.4
            case 5: r.5
            case 6: r.6
            case 7: r.7
            default: r.8
            }
        }
        for i in 0..<size {
            atb[i] += v[i] * value
            for j in 0..<size { ata[i * 9 + j] += v[i] * v[j] }
        }
    }

    /// Gaussian elimination with partial pivoting; nil when singular.
    func solve() -> InlineArray<9, Double>? {
        var a = ata
        var b = atb
        let n = size
        var scale = 0.0
        for i in 0..<n { scale = max(scale, abs(a[i * 9 + i])) }
        guard scale > 0 else { return nil }
        for col in 0..<n {
            var pivot = col
            for r in (col + 1)..<max(col + 1, n) where abs(a[r * 9 + col]) > abs(a[pivot * 9 + col]) { pivot = r }
            guard abs(a[pivot * 9 + col]) > 1e-12 * scale else { return nil }
            if pivot != col {
                for k in 0..<n { a.swapAt(col * 9 + k, pivot * 9 + k) }
                b.swapAt(col, pivot)
            }
            for r in (col + 1)..<max(col + 1, n) {
                let f = a[r * 9 + col] / a[col * 9 + col]
                if f == 0 { continue }
                for k in col..<n { a[r * 9 + k] -= f * a[col * 9 + k] }
                b[r] -= f * b[col]
            }
        }
        var x = InlineArray<9, Double>(repeating: 0)
        for row in stride(from: n - 1, through: 0, by: -1) {
            var s = b[row]
            for k in (row + 1)..<max(row + 1, n) { s -= a[row * 9 + k] * x[k] }
            x[row] = s / a[row * 9 + row]
        }
        for i in 0..<n where !x[i].isFinite { return nil }
        return x
    }
}

/// Eigen-decomposition of a symmetric 3×3 matrix by cyclic Jacobi rotations.
struct SymmetricEigen {
    var values: Vector3
    /// Columns are the eigenvectors.
    var vectors: Matrix3x3

    init(_ m: Matrix3x3) {
        var a = m
        var v = Matrix3x3.identity
        for _ in 0..<32 {
            let off = a.r0.y * a.r0.y + a.r0.z * a.r0.z + a.r1.z * a.r1.z
            if off < 1e-30 { break }
            for pair in 0..<3 {
                let (p, q) = pair == 0 ? (0, 1) : (pair == 1 ? (0, 2) : (1, 2))
                let apq = a[p, q]
                if abs(apq) < 1e-300 { continue }
                let theta = (a[q, q] - a[p, p]) / (2 * apq)
                let t = (theta >= 0 ? 1.0 : -1.0) / (abs(theta) + (theta * theta + 1).squareRoot())
                let c = 1 / (t * t + 1).squareRoot()
                let s = t * c
                var j = Matrix3x3.identity
                j[p, p] = c
                j[q, q] = c
                j[p, q] = s
                j[q, p] = -s
                a = j.transposed * a * j
                v = v * j
            }
        }
        values = Vector3(a.r0.x, a.r1.y, a.r2.z)
        vectors = v
    }

    /// V · diag(√λ) · Vᵀ, nil unless positive definite.
    var squareRoot: Matrix3x3? {
        guard values.x > 0, values.y > 0, values.z > 0 else { return nil }
        let d = Matrix3x3(
            r0: Vector3(values.x.squareRoot(), 0, 0),
            r1: Vector3(0, values.y.squareRoot(), 0),
            r2: Vector3(0, 0, values.z.squareRoot())
        )
        return vectors * d * vectors.transposed
    }
}

extension Matrix3x3 {
    subscript(i: Int, j: Int) -> Double {
        get {
            let r = i == 0 ? r0 : (i == 1 ? r1 : r2)
            return j == 0 ? r.x : (j == 1 ? r.y : r.z)
        }
        set {
            switch (i, j) {
            case (0, 0): r0.x = newValue
            case (0, 1): r0.y = newValue
            case (0, 2): r0.z = newValue
            case (1, 0): r1.x = newValue
            case (1, 1): r1.y = newValue
            case (1, 2): r1.z = newValue
            case (2, 0): r2.x = newValue
            case (2, 1): r2.y = newValue
            default: r2.z = newValue
            }
        }
    }
}
