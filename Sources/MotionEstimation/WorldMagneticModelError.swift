/// Why ``WorldMagneticModel/field(latitude:longitude:altitudeKm:decimalYear:)`` refused its inputs, with a
/// sentence that names the bad value and what to pass instead.
package struct WorldMagneticModelError: Error, Sendable, Hashable, CustomStringConvertible {
    package enum Code: Sendable, Hashable {
        /// The date is outside the model's five-year validity.
        case dateOutOfRange
        /// The latitude is outside −90...90 degrees.
        case latitudeOutOfRange
        /// The height is outside −1...850 km above the WGS-84 ellipsoid.
        case altitudeOutOfRange
        /// An input is NaN or infinite.
        case nonFiniteInput
    }

    package let code: Code
    package let message: String

    package var description: String { message }

    init(code: Code, message: String) {
        self.code = code
        self.message = message
    }

    static func dateOutOfRange(_ decimalYear: Double, model: String, validYears: ClosedRange<Double>) -> Self {
        Self(
            code: .dateOutOfRange,
            message: "decimal year \(decimalYear) is outside \(model), which is valid \(validYears.lowerBound)–"
                + "\(validYears.upperBound): check the system clock, or update the coefficient file to the current "
                + "World Magnetic Model (rerun scripts/codegen/wmm/generate_coefficients.py on the new WMM.COF)"
        )
    }

    static func latitudeOutOfRange(_ latitude: Double) -> Self {
        Self(
            code: .latitudeOutOfRange,
            message: "latitude \(latitude)° is outside −90...90: pass geodetic latitude in degrees, north positive"
        )
    }

    static func altitudeOutOfRange(_ altitudeKm: Double) -> Self {
        Self(
            code: .altitudeOutOfRange,
            message: "altitude \(altitudeKm) km is outside the model's −1...850 km: pass the height above the "
                + "WGS-84 ellipsoid in kilometres, not metres"
        )
    }

    static func nonFinite(input: String, value: Double) -> Self {
        Self(
            code: .nonFiniteInput,
            message: "\(input) is \(value): pass finite coordinates and date (a NaN usually means no position fix yet)"
        )
    }
}
