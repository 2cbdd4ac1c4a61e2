import Foundation

/// Where a runtime setting's effective value came from, reported per key in the status document and by
/// `check-config --explain`, so an operator sees why a device runs what it runs.
package enum SettingSource: Sendable, Equatable, CustomStringConvertible {
    /// config.yaml (or the schema's default when config.yaml does not set the key).
    case configFile
    /// A desired document, with the version that set the value.
    case desired(ConfigurationLayer, version: Int)
    /// A control command's override, with its id and when it arrived (Unix seconds).
    case command(id: String, time: Double)

    /// `config.yaml`, `fleet v12`, `group lab v3`, `device v7`, `command 7f1c2a at 2026-11-25T17:02:11Z`.
    package var description: String {
        switch self {
        case .configFile:
            return "config.yaml"
        case .desired(let layer, let version):
            return "\(layer) v\(version)"
        case .command(let id, let time):
            return "command \(id) at \(Self.utc(time))"
        }
    }

    /// `2026-11-25T17:02:11Z` for Unix seconds (the whole second below), as ISO8601DateFormatter writes it: a
    /// formatter made for every setting of every status document was 3 % of the fault explorer's time.
    static func utc(_ time: Double) -> String {
        let seconds = Int64(time.rounded(.down))
        let (days, second) = (seconds.floorDiv(86_400), seconds.floorMod(86_400))
        // Days since 1970-01-01 to a civil date (Howard Hinnant's algorithm, proleptic Gregorian calendar).
        let z = days + 719_468
        let era = z.floorDiv(146_097)
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        func two(_ value: Int64) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(year)-\(two(month))-\(two(day))T\(two(second / 3600)):\(two(second % 3600 / 60)):\(two(second % 60))Z"
    }
}

extension Int64 {
    fileprivate func floorDiv(_ divisor: Int64) -> Int64 {
        let quotient = self / divisor
        return (self % divisor != 0 && (self < 0) != (divisor < 0)) ? quotient - 1 : quotient
    }

    fileprivate func floorMod(_ divisor: Int64) -> Int64 { self - floorDiv(divisor) * divisor }
}
