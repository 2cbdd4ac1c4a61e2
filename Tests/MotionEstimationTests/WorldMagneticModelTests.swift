import Foundation
import MotionModel
import Testing

@testable import MotionEstimation

@Suite("World Magnetic Model 2025")
struct WorldMagneticModelTests {
    let model = WorldMagneticModel.wmm2025

    @Test(
        "NOAA's published WMM2025 test values, within 0.1 nT and 0.01°",
        arguments: WorldMagneticModelTests.noaaTestValues
    )
    func noaaTestValue(_ row: NOAATestValue) throws {
        let b = try model.field(
            latitude: row.latitude,
            longitude: row.longitude,
            altitudeKm: row.heightKm,
            decimalYear: row.year
        )
        #expect(abs(b.northNanotesla - row.x) <= 0.1)
        #expect(abs(b.eastNanotesla - row.y) <= 0.1)
        #expect(abs(b.downNanotesla - row.z) <= 0.1)
        #expect(abs(b.horizontalNanotesla - row.h) <= 0.1)
        #expect(abs(b.totalNanotesla - row.f) <= 0.1)
        #expect(abs(b.inclinationDegrees - row.inclination) <= 0.01)
        #expect(abs(b.declinationDegrees - row.declination) <= 0.01)
    }

    @Test("the model states WMM-2025, epoch 2025.0, valid 2025.0–2030.0, degree 12")
    func identity() {
        #expect(model.name == "WMM-2025")
        #expect(model.epoch == 2025.0)
        #expect(model.validYears == 2025.0...2030.0)
        #expect(model.maxDegree == 12)
        #expect(WMM2025Coefficients.rows.count == 90)
    }

    @Test("the north-west-up vector is X, −Y, −Z in µT and has length F")
    func northWestUp() throws {
        let b = try model.field(latitude: 47.4, longitude: 8.5, altitudeKm: 0.4, decimalYear: 2026.3)
        let v = b.northWestUpMicrotesla
        #expect(v.x == b.northNanotesla / 1000)
        #expect(v.y == -b.eastNanotesla / 1000)
        #expect(v.z == -b.downNanotesla / 1000)
        #expect(abs(v.norm - b.totalNanotesla / 1000) < 1e-9)
        // Northern mid-latitudes: the field points north and dips down, so "up" is negative.
        #expect(v.x > 0 && v.z < 0)
        #expect(abs(b.declinationRadians - b.declinationDegrees * .pi / 180) < 1e-12)
    }

    @Test("longitude −120° and 240° are the same place")
    func longitudeWraps() throws {
        let a = try model.field(latitude: -33, longitude: -120, altitudeKm: 2, decimalYear: 2028.1)
        let b = try model.field(latitude: -33, longitude: 240, altitudeKm: 2, decimalYear: 2028.1)
        #expect(abs(a.northNanotesla - b.northNanotesla) < 1e-6)
        #expect(abs(a.eastNanotesla - b.eastNanotesla) < 1e-6)
        #expect(abs(a.downNanotesla - b.downNanotesla) < 1e-6)
    }

    @Test("secular variation is linear in time: mid-validity is the mean of the ends")
    func secularVariationIsLinear() throws {
        let start = try model.field(latitude: 60, longitude: -45, altitudeKm: 10, decimalYear: 2025.0)
        let middle = try model.field(latitude: 60, longitude: -45, altitudeKm: 10, decimalYear: 2027.5)
        let end = try model.field(latitude: 60, longitude: -45, altitudeKm: 10, decimalYear: 2030.0)
        #expect(abs(middle.northNanotesla - (start.northNanotesla + end.northNanotesla) / 2) < 1e-6)
        #expect(abs(middle.eastNanotesla - (start.eastNanotesla + end.eastNanotesla) / 2) < 1e-6)
        #expect(abs(middle.downNanotesla - (start.downNanotesla + end.downNanotesla) / 2) < 1e-6)
        // And the field does change over five years (tens of nT at least), so the test above is not vacuous.
        #expect(abs(end.downNanotesla - start.downNanotesla) > 10)
    }

    @Test(
        "at a geographic pole the field is finite, one horizontal vector seen from every meridian, and continuous",
        arguments: [90.0, -90.0]
    )
    func pole(latitude: Double) throws {
        let year = 2026.0
        let meridians = [0.0, 30.0, 135.0, 200.0, -75.0]
        var fixedFrame: [(Double, Double)] = []
        for longitude in meridians {
            let b = try model.field(latitude: latitude, longitude: longitude, altitudeKm: 0, decimalYear: year)
            #expect(b.northNanotesla.isFinite && b.eastNanotesla.isFinite && b.downNanotesla.isFinite)
            // The local north along meridian λ and east, expressed in the Earth-fixed equatorial plane:
            // at the north pole north = −(cos λ, sin λ), at the south pole north = +(cos λ, sin λ);
            // east = (−sin λ, cos λ) at both.
            let lambda = longitude * .pi / 180
            let sign = latitude > 0 ? -1.0 : 1.0
            let ex = b.northNanotesla * sign * cos(lambda) - b.eastNanotesla * sin(lambda)
            let ey = b.northNanotesla * sign * sin(lambda) + b.eastNanotesla * cos(lambda)
            fixedFrame.append((ex, ey))

            // A point 1e-4° (11 m) away along the same meridian sees nearly the same field.
            let nearLatitude = latitude > 0 ? latitude - 0.0001 : latitude + 0.0001
            let near = try model.field(latitude: nearLatitude, longitude: longitude, altitudeKm: 0, decimalYear: year)
            #expect(abs(near.northNanotesla - b.northNanotesla) < 1)
            #expect(abs(near.eastNanotesla - b.eastNanotesla) < 1)
            #expect(abs(near.downNanotesla - b.downNanotesla) < 1)
        }
        for (ex, ey) in fixedFrame.dropFirst() {
            #expect(abs(ex - fixedFrame[0].0) < 1e-6)
            #expect(abs(ey - fixedFrame[0].1) < 1e-6)
        }
        // The horizontal field at the geographic poles is over a thousand nT, so the rotation test bites.
        #expect(hypot(fixedFrame[0].0, fixedFrame[0].1) > 1000)
    }

    @Test("the ends of the valid ranges are accepted")
    func boundsAccepted() throws {
        for year in [2025.0, 2030.0] {
            for latitude in [-90.0, 90.0] {
                for height in [-1.0, 850.0] {
                    let b = try model.field(latitude: latitude, longitude: 0, altitudeKm: height, decimalYear: year)
                    #expect(b.totalNanotesla > 20_000)
                }
            }
        }
    }

    @Test("dates outside 2025.0–2030.0 are refused with the fix", arguments: [2024.999, 2030.001, 2020.0, 2035.0])
    func dateOutOfRange(year: Double) {
        let error = #expect(throws: WorldMagneticModelError.self) {
            try model.field(latitude: 10, longitude: 10, altitudeKm: 0, decimalYear: year)
        }
        #expect(error?.code == .dateOutOfRange)
        #expect(error?.message.contains("valid 2025.0–2030.0") == true)
        #expect(error?.message.contains("coefficient file") == true)
    }

    @Test("latitudes outside ±90° are refused", arguments: [90.0001, -90.0001, 180.0])
    func latitudeOutOfRange(latitude: Double) {
        let error = #expect(throws: WorldMagneticModelError.self) {
            try model.field(latitude: latitude, longitude: 0, altitudeKm: 0, decimalYear: 2026)
        }
        #expect(error?.code == .latitudeOutOfRange)
        #expect(error?.message.contains("−90...90") == true)
    }

    @Test("heights outside −1...850 km are refused, naming kilometres", arguments: [-1.5, 850.5, 1500.0])
    func altitudeOutOfRange(height: Double) {
        let error = #expect(throws: WorldMagneticModelError.self) {
            try model.field(latitude: 0, longitude: 0, altitudeKm: height, decimalYear: 2026)
        }
        #expect(error?.code == .altitudeOutOfRange)
        #expect(error?.message.contains("kilometres") == true)
    }

    @Test("non-finite inputs are refused, naming the input")
    func nonFinite() {
        let cases: [(String, () throws(WorldMagneticModelError) -> WorldMagneticModel.GeomagneticField)] = [
            (
                "latitude",
                { () throws(WorldMagneticModelError) in
                    try model.field(latitude: .nan, longitude: 0, altitudeKm: 0, decimalYear: 2026)
                }
            ),
            (
                "longitude",
                { () throws(WorldMagneticModelError) in
                    try model.field(latitude: 0, longitude: .infinity, altitudeKm: 0, decimalYear: 2026)
                }
            ),
            (
                "altitudeKm",
                { () throws(WorldMagneticModelError) in
                    try model.field(latitude: 0, longitude: 0, altitudeKm: .nan, decimalYear: 2026)
                }
            ),
            (
                "decimalYear",
                { () throws(WorldMagneticModelError) in
                    try model.field(latitude: 0, longitude: 0, altitudeKm: 0, decimalYear: -.infinity)
                }
            ),
        ]
        for (input, call) in cases {
            do {
                _ = try call()
                Issue.record("\(input): a non-finite value was accepted")
            } catch {
                #expect(error.code == .nonFiniteInput)
                #expect(error.message.hasPrefix(input))
            }
        }
    }

    @Test(
        "decimal year counts seconds of the real year length, UTC",
        arguments: WorldMagneticModelTests.decimalYearCases
    )
    func decimalYear(_ c: DecimalYearCase) {
        let year = WorldMagneticModel.decimalYear(from: Date(timeIntervalSince1970: c.secondsSince1970))
        #expect(abs(year - c.year) < 1e-9)
    }

    @Test(
        "heading usability thresholds: 6000 nT caution, 2000 nT blackout",
        arguments: [
            (40_000.0, WorldMagneticModel.HeadingUsability.normal),
            (6_000.0, .normal),
            (5_999.9, .degraded),
            (2_000.0, .degraded),
            (1_999.9, .unusable),
            (0.0, .unusable),
            (.nan, .unusable),
        ]
    )
    func headingUsability(horizontal: Double, expected: WorldMagneticModel.HeadingUsability) {
        #expect(WorldMagneticModel.HeadingUsability(horizontalNanotesla: horizontal) == expected)
    }

    @Test("heading usability at real places: Zurich, the Siberian Arctic, next to the north dip pole")
    func headingUsabilityPlaces() throws {
        let zurich = try model.field(latitude: 47.4, longitude: 8.5, altitudeKm: 0.4, decimalYear: 2026)
        let arctic = try model.field(latitude: 80, longitude: 140, altitudeKm: 0, decimalYear: 2026)
        let dipPole = try model.field(latitude: 86, longitude: 140, altitudeKm: 0, decimalYear: 2026)
        #expect(zurich.headingUsability == .normal)
        #expect(arctic.headingUsability == .degraded)
        #expect(dipPole.headingUsability == .unusable)
    }
}

extension WorldMagneticModelTests {
    /// One row of NOAA's published WMM2025 test values (WMM2025_TEST_VALUES.txt, the technical report's test
    /// table): inputs, then X, Y, Z, H, F in nT and I, D in degrees, rounded to 0.1 nT and 0.01°.
    struct NOAATestValue: Sendable, CustomTestStringConvertible {
        var year: Double
        var heightKm: Double
        var latitude: Double
        var longitude: Double
        var x: Double
        var y: Double
        var z: Double
        var h: Double
        var f: Double
        var inclination: Double
        var declination: Double

        var testDescription: String { "\(year), \(heightKm) km, \(latitude)°, \(longitude)°" }
    }

    // swift-format-ignore
    static let noaaTestValues: [NOAATestValue] = [
        .init(year: 2025.0, heightKm: 0, latitude: 80, longitude: 0, x: 6521.6, y: 145.9, z: 54791.5, h: 6523.2, f: 55178.5, inclination: 83.21, declination: 1.28),
        .init(year: 2025.0, heightKm: 0, latitude: 0, longitude: 120, x: 39677.8, y: -109.6, z: -10580.2, h: 39677.9, f: 41064.3, inclination: -14.93, declination: -0.16),
        .init(year: 2025.0, heightKm: 0, latitude: -80, longitude: 240, x: 6117.5, y: 15751.9, z: -52022.5, h: 16898.1, f: 54698.2, inclination: -72.00, declination: 68.78),
        .init(year: 2025.0, heightKm: 100, latitude: 80, longitude: 0, x: 6216.0, y: 92.4, z: 52598.8, h: 6216.7, f: 52964.9, inclination: 83.26, declination: 0.85),
        .init(year: 2025.0, heightKm: 100, latitude: 0, longitude: 120, x: 37688.6, y: -96.2, z: -10152.1, h: 37688.7, f: 39032.1, inclination: -15.08, declination: -0.15),
        .init(year: 2025.0, heightKm: 100, latitude: -80, longitude: 240, x: 5907.6, y: 14780.3, z: -49540.7, h: 15917.1, f: 52035.0, inclination: -72.19, declination: 68.21),
        .init(year: 2027.5, heightKm: 0, latitude: 80, longitude: 0, x: 6500.8, y: 294.5, z: 54869.4, h: 6507.5, f: 55253.9, inclination: 83.24, declination: 2.59),
        .init(year: 2027.5, heightKm: 0, latitude: 0, longitude: 120, x: 39701.6, y: -167.4, z: -10381.8, h: 39702.0, f: 41036.9, inclination: -14.65, declination: -0.24),
        .init(year: 2027.5, heightKm: 0, latitude: -80, longitude: 240, x: 6200.7, y: 15730.3, z: -51783.7, h: 16908.3, f: 54474.2, inclination: -71.92, declination: 68.49),
        .init(year: 2027.5, heightKm: 100, latitude: 80, longitude: 0, x: 6196.7, y: 233.8, z: 52670.5, h: 6201.1, f: 53034.3, inclination: 83.29, declination: 2.16),
        .init(year: 2027.5, heightKm: 100, latitude: 0, longitude: 120, x: 37711.5, y: -148.7, z: -9969.8, h: 37711.8, f: 39007.4, inclination: -14.81, declination: -0.23),
        .init(year: 2027.5, heightKm: 100, latitude: -80, longitude: 240, x: 5984.0, y: 14760.1, z: -49317.7, h: 15927.0, f: 51825.7, inclination: -72.10, declination: 67.93),
    ]

    struct DecimalYearCase: Sendable, CustomTestStringConvertible {
        var secondsSince1970: Double
        var year: Double
        var testDescription: String { "\(secondsSince1970) s → \(year)" }
    }

    private static let secondsPerDay: Double = 86_400
    private static let start2024: Double = 1_704_067_200  // 2024-01-01T00:00:00Z
    private static let start2025: Double = 1_735_689_600  // 2025-01-01T00:00:00Z

    static let decimalYearCases: [DecimalYearCase] = [
        .init(secondsSince1970: start2025, year: 2025.0),
        // 2025-07-02T12:00:00Z: half of a 365-day year.
        .init(secondsSince1970: start2025 + 182.5 * secondsPerDay, year: 2025.5),
        // 2024-07-02T00:00:00Z: half of a 366-day year.
        .init(secondsSince1970: start2024 + 183 * secondsPerDay, year: 2024.5),
        // 2023-12-31T23:59:59Z: one second before 2024.
        .init(secondsSince1970: start2024 - 1, year: 2024.0 - 1 / (365 * secondsPerDay)),
        // 2000-03-01T00:00:00Z: 2000 is a leap year (divisible by 400).
        .init(secondsSince1970: 951_868_800, year: 2000.0 + 60.0 / 366),
        // 1969-12-31T12:00:00Z, before the Unix epoch.
        .init(secondsSince1970: -43_200, year: 1969.0 + 364.5 / 365),
        // 2030-01-01T00:00:00Z, the model's last valid instant.
        .init(secondsSince1970: 1_893_456_000, year: 2030.0),
    ]
}
