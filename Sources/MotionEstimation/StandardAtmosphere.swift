#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The ICAO standard atmosphere's troposphere (ISO 2533:1975, 0–11 km): temperature 288.15 K at sea level
/// falling 6.5 K/km, so `h = T0/L · (1 − (p/p0)^(R·L/(g·M)))`.
package enum StandardAtmosphere {
    /// Standard sea-level pressure, kPa.
    package static let seaLevelPressureKPa = 101.325
    /// `T0 / L` = 288.15 K / 0.0065 K/m, m.
    static let scaleHeight = 44_330.769
    /// `R·L/(g·M)` = 8.31446 · 0.0065 / (9.80665 · 0.0289644).
    static let exponent = 0.190_263

    /// Height above the level where the pressure is `referenceKPa`, m.
    package static func altitude(pressureKPa: Double, referenceKPa: Double = seaLevelPressureKPa) -> Double {
        scaleHeight * (1 - pow(pressureKPa / referenceKPa, exponent))
    }

    /// The pressure at `altitude` m above the level where it is `referenceKPa`, kPa.
    package static func pressure(altitude: Double, referenceKPa: Double = seaLevelPressureKPa) -> Double {
        referenceKPa * pow(1 - altitude / scaleHeight, 1 / exponent)
    }

    /// Metres of height per kPa of pressure near `pressureKPa` (≈ 84 m/kPa at sea level).
    package static func metresPerKPa(at pressureKPa: Double, referenceKPa: Double = seaLevelPressureKPa) -> Double {
        scaleHeight * exponent * pow(pressureKPa / referenceKPa, exponent) / pressureKPa
    }
}
