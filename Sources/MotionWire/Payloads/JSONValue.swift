import Foundation

/// A parsed JSON value that keeps booleans, integers and other numbers apart (JSONSerialization's `NSNumber` does
/// not on Linux: `1 is Bool` holds there), for the strict payload decoder.
enum JSONValue: Decodable, Sendable {
    case null
    case bool(Bool)
    case unsigned(UInt64)
    case integer(Int64)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    init(from decoder: any Decoder) throws {
        let c = try decoder.singleValueContainer()
        if c.decodeNil() {
            self = .null
        } else if let b = try? c.decode(Bool.self) {
            self = .bool(b)
        } else if let u = try? c.decode(UInt64.self) {
            self = .unsigned(u)
        } else if let i = try? c.decode(Int64.self) {
            self = .integer(i)
        } else if let d = try? c.decode(Double.self) {
            self = .number(d)
        } else if let s = try? c.decode(String.self) {
            self = .string(s)
        } else if let a = try? c.decode([JSONValue].self) {
            self = .array(a)
        } else {
            self = .object(try c.decode([String: JSONValue].self))
        }
    }

    static func parse(_ bytes: [UInt8]) throws -> JSONValue {
        try JSONDecoder().decode(JSONValue.self, from: Data(bytes))
    }

    /// The value of a number, whatever its form.
    var number: Double? {
        switch self {
        case .unsigned(let u): Double(u)
        case .integer(let i): Double(i)
        case .number(let d): d
        default: nil
        }
    }
}
