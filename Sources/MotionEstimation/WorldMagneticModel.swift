import MotionModel

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The World Magnetic Model: Earth's main magnetic field as a degree-and-order-12 spherical-harmonic
/// expansion with linear secular variation, as NOAA NCEI and BGS publish it every five years.
///
/// MotionAgent uses it three ways: the declination turns a magnetic heading into a true-north one, the
/// field vector is the simulator's ambient field and the estimator's reference, and the horizontal intensity
/// tells whether a magnetometer heading can be trusted at all (``HeadingUsability``).
///
/// The evaluation follows the model equations of "The US/UK World Magnetic Model for 2025–2030: Technical
/// Report" (NOAA NCEI and BGS), section 1.2, step by step: geodetic (WGS-84) to geocentric spherical
/// coordinates, time-adjusted Gauss coefficients, Schmidt semi-normalised associated Legendre functions,
/// the field in spherical components, rotation back to the ellipsoid's local north-east-down frame, and
/// the derived elements H, F, I, D.
///
/// `field(...)` allocates nothing: the recursions run over scalars, and the coefficient tables are built once.
package struct WorldMagneticModel: Sendable {
    /// One row of a coefficient file: degree `n`, order `m`, Gauss coefficients `g`, `h` (nT) at the epoch and
    /// their secular variation `gDot`, `hDot` (nT/yr).
    struct Coefficient: Sendable {
        var n: Int
        var m: Int
        var g: Double
        var h: Double
        var gDot: Double
        var hDot: Double
    }

    /// The model's name as its coefficient file states it ("WMM-2025").
    package let name: String
    /// The reference epoch of the coefficients, decimal year.
    package let epoch: Double
    /// The decimal years in which the model is valid: five years from the epoch, both ends included.
    package let validYears: ClosedRange<Double>
    /// Highest degree (and order) of the expansion.
    package let maxDegree: Int

    // Coefficients in triangular order, index n(n+1)/2 + m, already multiplied by the Schmidt factor that
    // turns the Gauss-normalised Legendre functions computed in `field` into Schmidt semi-normalised ones
    // (the report's Schmidt semi-normalisation). Index 0 (n = 0) stays zero: the model has no monopole.
    private let g: [Double]
    private let h: [Double]
    private let gDot: [Double]
    private let hDot: [Double]
    // K(n, m) = ((n-1)^2 - m^2) / ((2n-1)(2n-3)), the three-term recursion constant, same indexing.
    private let recursion: [Double]

    /// WMM2025: epoch 2025.0, valid 2025.0–2030.0, degree and order 12 (see `WMM2025Coefficients.swift`
    /// for the file's provenance and checksum).
    package static let wmm2025 = WorldMagneticModel(
        name: WMM2025Coefficients.name,
        epoch: WMM2025Coefficients.epoch,
        validUntil: WMM2025Coefficients.validUntil,
        maxDegree: 12,
        coefficients: WMM2025Coefficients.rows
    )

    /// Builds a model from a complete coefficient table (every n in 1...maxDegree, m in 0...n). The embedded
    /// tables are generated and checked by scripts/codegen/wmm/generate_coefficients.py, so a gap is a programming
    /// error, not a run-time condition.
    init(name: String, epoch: Double, validUntil: Double, maxDegree: Int, coefficients: [Coefficient]) {
        precondition(
            maxDegree >= 1 && coefficients.count == (maxDegree + 1) * (maxDegree + 2) / 2 - 1,
            "a \(maxDegree)-degree model needs every (n, m) with 1 ≤ n ≤ \(maxDegree), 0 ≤ m ≤ n"
        )
        self.name = name
        self.epoch = epoch
        self.validYears = epoch...validUntil
        self.maxDegree = maxDegree

        let count = (maxDegree + 1) * (maxDegree + 2) / 2
        var schmidt = [Double](repeating: 0, count: count)
        var recursion = [Double](repeating: 0, count: count)
        schmidt[0] = 1
        for n in 1...maxDegree {
            let row = n * (n + 1) / 2
            schmidt[row] = schmidt[(n - 1) * n / 2] * Double(2 * n - 1) / Double(n)
            for m in 1...n {
                let doubling = m == 1 ? 2.0 : 1.0
                schmidt[row + m] = schmidt[row + m - 1] * (Double(n - m + 1) * doubling / Double(n + m)).squareRoot()
            }
            if n >= 2 {
                for m in 0...n {
                    let d = Double(n - 1)
                    recursion[row + m] = (d * d - Double(m * m)) / (Double(2 * n - 1) * Double(2 * n - 3))
                }
            }
        }

        var g = [Double](repeating: 0, count: count)
        var h = g
        var gDot = g
        var hDot = g
        var seen = [Bool](repeating: false, count: count)
        for c in coefficients {
            precondition(
                (1...maxDegree).contains(c.n) && (0...c.n).contains(c.m),
                "coefficient (\(c.n), \(c.m)) out of range"
            )
            let i = c.n * (c.n + 1) / 2 + c.m
            precondition(!seen[i], "coefficient (\(c.n), \(c.m)) appears twice")
            seen[i] = true
            g[i] = c.g * schmidt[i]
            h[i] = c.h * schmidt[i]
            gDot[i] = c.gDot * schmidt[i]
            hDot[i] = c.hDot * schmidt[i]
        }
        self.g = g
        self.h = h
        self.gDot = gDot
        self.hDot = hDot
        self.recursion = recursion
    }

    /// The main field at a place and time.
    ///
    /// - Parameters:
    ///   - latitude: geodetic latitude, degrees north, −90...90.
    ///   - longitude: geodetic longitude, degrees east (any finite value; −120 and 240 are the same place).
    ///   - altitudeKm: height above the WGS-84 ellipsoid in kilometres (not metres, not above sea level),
    ///     −1...850 km as the report specifies; GNSS receivers report this height directly.
    ///   - decimalYear: the date as a decimal year (``decimalYear(from:)``), inside ``validYears``.
    /// - Throws: ``WorldMagneticModelError`` naming the offending input and what to pass instead.
    package func field(
        latitude: Double,
        longitude: Double,
        altitudeKm: Double,
        decimalYear: Double
    ) throws(WorldMagneticModelError) -> GeomagneticField {
        try validate(latitude: latitude, longitude: longitude, altitudeKm: altitudeKm, decimalYear: decimalYear)

        // Step 1, geodetic → geocentric spherical, on the WGS-84 ellipsoid: a = 6378.137 km,
        // 1/f = 298.257223563 (NIMA TR8350.2).
        let semiMajorAxisKm = 6378.137
        let flattening = 1 / 298.257223563
        let eccentricitySquared = flattening * (2 - flattening)
        let phi = latitude * .pi / 180
        let lambda = longitude * .pi / 180
        let sinPhi = sin(phi)
        let cosPhi = cos(phi)
        let primeVerticalRadiusKm = semiMajorAxisKm / (1 - eccentricitySquared * sinPhi * sinPhi).squareRoot()
        let p = (primeVerticalRadiusKm + altitudeKm) * cosPhi
        let z = (primeVerticalRadiusKm * (1 - eccentricitySquared) + altitudeKm) * sinPhi
        let radiusKm = (p * p + z * z).squareRoot()
        let phiPrime = asin(z / radiusKm)

        // Steps 2–3: coefficients at the date (g(t) = g + (t − t0) ġ) and the spherical-harmonic synthesis of
        // X', Y', Z' with the geomagnetic reference radius a = 6371.2 km.
        let referenceRadiusKm = 6371.2
        let years = decimalYear - epoch
        let ratio = referenceRadiusKm / radiusKm
        // x = sin φ' = cos θ and s = cos φ' = sin θ, θ the geocentric colatitude.
        let x = sin(phiPrime)
        let s = cos(phiPrime)

        var north = 0.0  // X', nT
        var east = 0.0  // Y', nT
        var down = 0.0  // Z', nT

        // Order m outermost, degree n inner: each column of the Legendre table needs only the two entries
        // above it, so no table is stored. P(m, m) and its θ-derivative seed each column.
        var sectoral = 1.0  // Gauss-normalised P(m, m)(cos θ)
        var sectoralDerivative = 0.0  // dP(m, m)/dθ
        var cosMLambda = 1.0
        var sinMLambda = 0.0
        let cosLambda = cos(lambda)
        let sinLambda = sin(lambda)
        var columnPower = ratio * ratio * ratio  // (a/r)^(n+2) at the column's first degree, n = max(m, 1)
        for m in 0...maxDegree {
            // Seed: P(m, m) = sin θ · P(m−1, m−1). For m ≥ 1 the column is carried divided by sin θ
            // ("reduced", Q = P / sin θ), which obeys the same recursion in n with seed P(m−1, m−1). That
            // gives the P / cos φ' of Y' without dividing by cos φ', so Y' stays finite at the geographic
            // poles, where only the m = 1 terms survive: the special pole summation of NOAA's reference C code
            // (MAG_SummationSpecial) falls out of the general one.
            let previousSectoral = sectoral
            var reduced = 0.0
            if m > 0 {
                sectoralDerivative = s * sectoralDerivative + x * sectoral
                reduced = previousSectoral
                sectoral = s * previousSectoral
            }
            var p1 = m == 0 ? 1.0 : reduced  // P (m = 0) or Q (m ≥ 1) at degree n − 1 during the loop
            var p2 = 0.0  // same at degree n − 2
            var d1 = sectoralDerivative  // dP/dθ at degree n − 1
            var d2 = 0.0
            var radial = columnPower
            for n in max(m, 1)...maxDegree {
                let i = n * (n + 1) / 2 + m
                let pn: Double  // P (m = 0) or Q (m ≥ 1) at degree n
                let dn: Double
                if n == m {
                    pn = p1
                    dn = d1
                } else {
                    // P(n, m) = cos θ P(n−1, m) − K P(n−2, m); d/dθ adds −sin θ P(n−1, m).
                    let k = recursion[i]
                    let full1 = m == 0 ? p1 : s * p1
                    pn = x * p1 - k * p2
                    dn = x * d1 - s * full1 - k * d2
                    p2 = p1
                    p1 = pn
                    d2 = d1
                    d1 = dn
                }
                let gnm = g[i] + years * gDot[i]
                let hnm = h[i] + years * hDot[i]
                let inPhase = gnm * cosMLambda + hnm * sinMLambda
                let quadrature = gnm * sinMLambda - hnm * cosMLambda
                let legendre = m == 0 ? pn : s * pn
                // dP/dφ' = −dP/dθ, hence X' = +Σ (a/r)^(n+2) (…) dP/dθ.
                north += radial * inPhase * dn
                if m > 0 {
                    east += radial * Double(m) * quadrature * pn
                }
                down -= radial * Double(n + 1) * inPhase * legendre
                radial *= ratio
            }
            if m > 0 {
                // Columns 0 and 1 both start at degree 1; from then on each starts one degree deeper.
                columnPower *= ratio
            }
            let nextCos = cosMLambda * cosLambda - sinMLambda * sinLambda
            sinMLambda = sinMLambda * cosLambda + cosMLambda * sinLambda
            cosMLambda = nextCos
        }

        // Step 4: rotate from the geocentric to the geodetic frame by ψ = φ' − φ. Step 5 (H, F, I, D) is in
        // GeomagneticField.
        let psi = phiPrime - phi
        let cosPsi = cos(psi)
        let sinPsi = sin(psi)
        let northNanotesla = north * cosPsi - down * sinPsi
        let downNanotesla = north * sinPsi + down * cosPsi
        return GeomagneticField(northNanotesla: northNanotesla, eastNanotesla: east, downNanotesla: downNanotesla)
    }

    private func validate(
        latitude: Double,
        longitude: Double,
        altitudeKm: Double,
        decimalYear: Double
    ) throws(WorldMagneticModelError) {
        guard latitude.isFinite else { throw .nonFinite(input: "latitude", value: latitude) }
        guard longitude.isFinite else { throw .nonFinite(input: "longitude", value: longitude) }
        guard altitudeKm.isFinite else { throw .nonFinite(input: "altitudeKm", value: altitudeKm) }
        guard decimalYear.isFinite else { throw .nonFinite(input: "decimalYear", value: decimalYear) }
        guard (-90...90).contains(latitude) else { throw .latitudeOutOfRange(latitude) }
        guard Self.validAltitudeKm.contains(altitudeKm) else { throw .altitudeOutOfRange(altitudeKm) }
        guard validYears.contains(decimalYear) else {
            throw .dateOutOfRange(decimalYear, model: name, validYears: validYears)
        }
    }

    /// Heights the report specifies the model for: 1 km below to 850 km above the WGS-84 ellipsoid.
    package static let validAltitudeKm: ClosedRange<Double> = -1...850
}
