#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension WorldMagneticModel {
    /// The date as a decimal year in UTC, the time argument of ``field(latitude:longitude:altitudeKm:decimalYear:)``:
    /// the year plus the fraction of it elapsed, counted in seconds of that year's real length (365 or 366 days,
    /// proleptic Gregorian). 2025-07-02T12:00:00Z is 2025.5. Leap seconds are ignored, as by `Date`.
    package static func decimalYear(from date: Date) -> Double {
        decimalYear(unixSeconds: date.timeIntervalSince1970)
    }

    /// ``decimalYear(from:)`` of a Unix time, s.
    package static func decimalYear(unixSeconds seconds: Double) -> Double {
        let secondsPerDay = 86_400.0
        let day = Int((seconds / secondsPerDay).rounded(.down))
        let year = civilYear(daysSince1970: day)
        let start = Double(daysSince1970(yearStart: year)) * secondsPerDay
        let end = Double(daysSince1970(yearStart: year + 1)) * secondsPerDay
        return Double(year) + (seconds - start) / (end - start)
    }

    /// Days from 1970-01-01 to January 1 of `year` (Howard Hinnant's days_from_civil, month = day = 1).
    private static func daysSince1970(yearStart year: Int) -> Int {
        // Count from March 1 so the leap day ends an era-year; January belongs to the previous such year.
        let y = year - 1
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = 306  // March 1 → January 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The Gregorian year containing the given day (Howard Hinnant's civil_from_days, year only).
    private static func civilYear(daysSince1970 days: Int) -> Int {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153  // 0 = March ... 11 = February
        return yearOfEra + era * 400 + (monthIndex >= 10 ? 1 : 0)
    }
}
