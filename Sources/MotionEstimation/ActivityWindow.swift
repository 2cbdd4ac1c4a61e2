import MotionModel

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The last `length` seconds of the 25 Hz series (`ActivityResampler`) and what the classifier reads from them
/// (`ActivityFeatures`).
///
/// Fixed capacity, allocated once: `append` and `features()` allocate nothing.
package struct ActivityWindow: Sendable {
    /// The window, s: DSADS' segments, and TMD's windows, are 5 s.
    package static let length = 5.0
    /// Bins in a window.
    package static let count = Int((length * ActivityResampler.rateHz).rounded())

    private var ring: ContiguousArray<ActivityResampler.Bin>
    private var next = 0
    /// Bins in the ring (up to `count`).
    package private(set) var filled = 0
    // Scratch for one computation, in time order: the window's bins and series derived from them.
    private var bins: ContiguousArray<ActivityResampler.Bin>
    private var accelerationNorm: ContiguousArray<Double>
    private var rotationNorm: ContiguousArray<Double>
    private var horizontalRotation: ContiguousArray<Double>
    private var sorted: ContiguousArray<Double>

    package init() {
        let zero = ActivityResampler.Bin(acceleration: .zero, rotationRate: .zero)
        ring = ContiguousArray(repeating: zero, count: Self.count)
        bins = ring
        accelerationNorm = ContiguousArray(repeating: 0, count: Self.count)
        rotationNorm = accelerationNorm
        horizontalRotation = accelerationNorm
        sorted = accelerationNorm
    }

    /// Whether the window holds `length` seconds.
    package var isFull: Bool { filled == Self.count }

    package mutating func append(_ bin: ActivityResampler.Bin) {
        ring[next] = bin
        next = (next + 1) % Self.count
        filled = min(filled + 1, Self.count)
    }

    /// Forgets the window (after a gap).
    package mutating func clear() {
        filled = 0
        next = 0
    }

    /// The features of the full window (nil until it is full).
    package mutating func features() -> ActivityFeatures? {
        guard isFull else { return nil }
        let n = Self.count
        for i in 0..<n { bins[i] = ring[(next + i) % n] }
        var f = ActivityFeatures()
        // Gravity's direction: the mean acceleration over the window.
        var mean = Vector3.zero
        for i in 0..<n { mean += bins[i].acceleration }
        mean = mean / Double(n)
        let gravityNorm = mean.norm
        let up = gravityNorm > 0 ? mean / gravityNorm : Vector3(0, 0, 1)

        // Magnitudes, TMD's statistics and more.
        var sa = 0.0
        var saa = 0.0
        var sw = 0.0
        var sww = 0.0
        var amin = Double.infinity
        var amax = -Double.infinity
        var wmin = Double.infinity
        var wmax = -Double.infinity
        // Vertical and horizontal parts (relative to `up`) of the acceleration and the rotation rate.
        var sv = 0.0
        var svv = 0.0
        var sh = Vector3.zero
        var shh = 0.0
        var wvv = 0.0
        var whh = 0.0
        var jerk = 0.0
        // Second moments of the rotation rate, and covariance of the acceleration (for their main axes).
        var rotationMoment = SymmetricMoment()
        var accelerationMoment = SymmetricMoment()
        for i in 0..<n {
            let a = bins[i].acceleration
            let w = bins[i].rotationRate
            let am = a.norm
            let wm = w.norm
            accelerationNorm[i] = am
            rotationNorm[i] = wm
            sa += am
            saa += am * am
            sw += wm
            sww += wm * wm
            amin = min(amin, am)
            amax = max(amax, am)
            wmin = min(wmin, wm)
            wmax = max(wmax, wm)
            let v = a.dot(up)
            let h = a - v * up
            sv += v
            svv += v * v
            sh += h
            shh += h.squaredNorm
            let wv = w.dot(up)
            let wh2 = max(w.squaredNorm - wv * wv, 0)
            wvv += wv * wv
            whh += wh2
            horizontalRotation[i] = wh2.squareRoot()
            if i > 0 { jerk += (a - bins[i - 1].acceleration).norm }
            rotationMoment.add(w)
            accelerationMoment.add(a - mean)
        }
        let count = Double(n)
        f.accelerationMean = sa / count
        f.accelerationStd = max(saa / count - f.accelerationMean * f.accelerationMean, 0).squareRoot()
        f.accelerationMin = amin
        f.accelerationMax = amax
        f.rotationMean = sw / count
        f.rotationStd = max(sww / count - f.rotationMean * f.rotationMean, 0).squareRoot()
        f.rotationMin = wmin
        f.rotationMax = wmax
        let verticalVariance = max(svv / count - (sv / count) * (sv / count), 0)
        let shMean = sh / count
        let horizontalVariance = max(shh / count - shMean.squaredNorm, 0)
        f.verticalStd = verticalVariance.squareRoot()
        f.horizontalStd = horizontalVariance.squareRoot()
        f.verticalFraction = verticalVariance / max(verticalVariance + horizontalVariance, 1e-12)
        f.verticalRotation = (wvv / count).squareRoot()
        f.horizontalRotation = (whh / count).squareRoot()
        f.jerk = jerk / Double(n - 1) * ActivityResampler.rateHz
        f.rotationAxisShare = rotationMoment.largestEigenvalueShare
        f.accelerationAxisShare = accelerationMoment.largestEigenvalueShare

        // Tilt: the angle between gravity's direction and the acceleration averaged over 0.2 s (5 bins).
        let k = 5
        var tiltSum = 0.0
        var tiltMax = 0.0
        var moving = Vector3.zero
        for i in 0..<n {
            moving += bins[i].acceleration
            if i >= k { moving -= bins[i - k].acceleration }
            guard i >= k - 1 else { continue }
            let norm = moving.norm
            let c = norm > 0 ? max(-1, min(1, moving.dot(up) / norm)) : 1
            let angle = acos(c) * 180 / Double.pi
            tiltSum += angle
            tiltMax = max(tiltMax, angle)
        }
        f.tiltMean = tiltSum / Double(n - k + 1)
        f.tiltMax = tiltMax

        // Percentiles of |a|.
        for i in 0..<n { sorted[i] = accelerationNorm[i] }
        f.accelerationP10 = Self.select(&sorted, rank: Int((0.1 * Double(n - 1)).rounded(.down)))
        f.accelerationP90 = Self.select(&sorted, rank: Int((0.9 * Double(n - 1)).rounded(.down)))

        // How the magnitudes repeat: the best normalised autocorrelation over lags of 0.32–2 s, and that lag.
        (f.accelerationPeriodicity, f.accelerationPeriod) = Self.periodicity(
            &accelerationNorm,
            mean: f.accelerationMean
        )
        (f.rotationPeriodicity, f.rotationPeriod) = Self.periodicity(&rotationNorm, mean: f.rotationMean)
        var horizontalMean = 0.0
        for i in 0..<n { horizontalMean += horizontalRotation[i] }
        (f.horizontalRotationPeriodicity, f.horizontalRotationPeriod) = Self.periodicity(
            &horizontalRotation,
            mean: horizontalMean / count
        )

        return f
    }

    /// Lags the periodicity looks at, in bins: 0.32–2 s (3 steps/s to a slow crank turn).
    static let lags = 8...50

    /// The largest normalised autocorrelation of `x` − `mean` over `lags`, and its lag in s. Centres `x` in place.
    private static func periodicity(_ x: inout ContiguousArray<Double>, mean: Double) -> (Double, Double) {
        x.withUnsafeMutableBufferPointer { c in
            let n = c.count
            var energy = 0.0
            for i in 0..<n {
                c[i] -= mean
                energy += c[i] * c[i]
            }
            guard energy > 1e-12 else { return (0, Double(lags.lowerBound) / ActivityResampler.rateHz) }
            var best = -Double.infinity
            var bestLag = lags.lowerBound
            for lag in lags {
                var s = 0.0
                for i in 0..<(n - lag) { s += c[i] * c[i + lag] }
                let r = s / energy
                if r > best {
                    best = r
                    bestLag = lag
                }
            }
            return (best, Double(bestLag) / ActivityResampler.rateHz)
        }
    }

    /// The `rank`-th smallest value (0-based) of `x`, which it reorders (Hoare's selection, no storage).
    static func select(_ x: inout ContiguousArray<Double>, rank: Int) -> Double {
        var lo = 0
        var hi = x.count - 1
        while lo < hi {
            let pivot = x[(lo + hi) / 2]
            var i = lo
            var j = hi
            while i <= j {
                while x[i] < pivot { i += 1 }
                while x[j] > pivot { j -= 1 }
                if i <= j {
                    x.swapAt(i, j)
                    i += 1
                    j -= 1
                }
            }
            if rank <= j {
                hi = j
            } else if rank >= i {
                lo = i
            } else {
                return x[rank]
            }
        }
        return x[rank]
    }
}

/// Running second moments of a 3-vector, and the share of their trace along the main axis.
struct SymmetricMoment {
    var xx = 0.0
    var yy = 0.0
    var zz = 0.0
    var xy = 0.0
    var xz = 0.0
    var yz = 0.0

    mutating func add(_ v: Vector3) {
        xx += v.x * v.x
        yy += v.y * v.y
        zz += v.z * v.z
        xy += v.x * v.y
        xz += v.x * v.z
        yz += v.y * v.z
    }

    /// Largest eigenvalue / trace (1/3 for motion in every direction alike, 1 along one axis; 1/3 with none),
    /// in closed form for a symmetric 3 × 3 matrix (Smith 1961).
    var largestEigenvalueShare: Double {
        let trace = xx + yy + zz
        guard trace > 1e-12 else { return 1.0 / 3 }
        let q = trace / 3
        let p1 = xy * xy + xz * xz + yz * yz
        let p2 = (xx - q) * (xx - q) + (yy - q) * (yy - q) + (zz - q) * (zz - q) + 2 * p1
        let p = (p2 / 6).squareRoot()
        guard p > 1e-12 * trace else { return 1.0 / 3 }
        // B = (A − qI) / p; r = det(B) / 2.
        let b00 = (xx - q) / p
        let b11 = (yy - q) / p
        let b22 = (zz - q) / p
        let b01 = xy / p
        let b02 = xz / p
        let b12 = yz / p
        let det = b00 * (b11 * b22 - b12 * b12) - b01 * (b01 * b22 - b12 * b02) + b02 * (b01 * b12 - b11 * b02)
        let r = max(-1, min(1, det / 2))
        let largest = q + 2 * p * cos(acos(r) / 3)
        return min(max(largest / trace, 1.0 / 3), 1)
    }
}
