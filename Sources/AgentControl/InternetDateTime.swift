/// RFC 3339 date-times (`2026-11-21T08:00:00Z`, `2026-11-21T09:00:00.25+01:00`) parsed by hand.
///
/// Commands arrive from the network, so this parser must survive any text. Foundation's ISO8601DateFormatter
/// hands the string to ICU, and ICU 76 dies of SIGFPE on a fraction of some 50 digits (FuzzControl found
/// `…T07:00:00.0122…221Z`); one malformed `query-pedometer` would have killed the agent.
enum InternetDateTime {
    /// Unix seconds, or nil when `text` is not an RFC 3339 date-time with a year from 0001 to 9999.
    static func unixSeconds(_ text: String) -> Double? {
        var scanner = Scanner(Array(text.utf8))
        guard let year = scanner.digits(4), scanner.take(UInt8(ascii: "-")),
            let month = scanner.digits(2), scanner.take(UInt8(ascii: "-")),
            let day = scanner.digits(2), scanner.take(UInt8(ascii: "T")) || scanner.take(UInt8(ascii: "t")),
            let hour = scanner.digits(2), scanner.take(UInt8(ascii: ":")),
            let minute = scanner.digits(2), scanner.take(UInt8(ascii: ":")),
            let second = scanner.digits(2)
        else { return nil }
        guard year >= 1, (1...12).contains(month), day >= 1, day <= daysIn(month: month, year: year),
            hour <= 23, minute <= 59, second <= 60
        else { return nil }

        var fraction = 0.0
        if scanner.take(UInt8(ascii: ".")) {
            // Digits past nanoseconds change nothing a Double can hold for dates near now; they are read and
            // ignored rather than refused, as RFC 3339 sets no limit.
            var scale = 0.1
            var count = 0
            while let d = scanner.digit() {
                if count < 9 { fraction += Double(d) * scale }
                scale /= 10
                count += 1
            }
            guard count > 0 else { return nil }
        }

        let offsetSeconds: Int
        if scanner.take(UInt8(ascii: "Z")) || scanner.take(UInt8(ascii: "z")) {
            offsetSeconds = 0
        } else {
            let sign: Int
            if scanner.take(UInt8(ascii: "+")) {
                sign = 1
            } else if scanner.take(UInt8(ascii: "-")) {
                sign = -1
            } else {
                return nil
            }
            guard let offsetHour = scanner.digits(2), scanner.take(UInt8(ascii: ":")),
                let offsetMinute = scanner.digits(2), offsetHour <= 23, offsetMinute <= 59
            else { return nil }
            offsetSeconds = sign * (offsetHour * 3600 + offsetMinute * 60)
        }
        guard scanner.atEnd else { return nil }

        let days = daysSince1970(year: year, month: month, day: day)
        let seconds = days * 86_400 + hour * 3600 + minute * 60 + second - offsetSeconds
        return Double(seconds) + fraction
    }

    /// Howard Hinnant's days_from_civil.
    static func daysSince1970(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    private static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    private struct Scanner {
        let bytes: [UInt8]
        var index = 0

        init(_ bytes: [UInt8]) { self.bytes = bytes }

        var atEnd: Bool { index == bytes.count }

        mutating func take(_ byte: UInt8) -> Bool {
            guard index < bytes.count, bytes[index] == byte else { return false }
            index += 1
            return true
        }

        mutating func digit() -> Int? {
            guard index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) else {
                return nil
            }
            defer { index += 1 }
            return Int(bytes[index] - UInt8(ascii: "0"))
        }

        /// Exactly `count` digits as one number.
        mutating func digits(_ count: Int) -> Int? {
            var value = 0
            for _ in 0..<count {
                guard let d = digit() else { return nil }
                value = value * 10 + d
            }
            return value
        }
    }
}
