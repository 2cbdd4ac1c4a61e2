import MotionModel

/// Typed access to a parsed JSON object, with errors that name the field: what every payload codec reads.
struct PayloadFields {
    let object: [String: JSONValue]

    init(_ object: [String: JSONValue]) { self.object = object }

    private func value(_ key: String) throws(WireDecodingError) -> JSONValue {
        guard let v = object[key] else { throw WireDecodingError("`\(key)` is missing") }
        return v
    }

    func number(_ key: String) throws(WireDecodingError) -> Double {
        guard let n = try value(key).number else { throw WireDecodingError("`\(key)` is not a number") }
        return n
    }

    /// A number that older payloads lack (nil then).
    func numberIfPresent(_ key: String) throws(WireDecodingError) -> Double? {
        guard object[key] != nil else { return nil }
        return try number(key)
    }

    func optionalNumber(_ key: String) throws(WireDecodingError) -> Double? {
        let v = try value(key)
        if case .null = v { return nil }
        guard let n = v.number else { throw WireDecodingError("`\(key)` is neither a number nor null") }
        return n
    }

    func integer(_ key: String) throws(WireDecodingError) -> Int {
        switch try value(key) {
        case .unsigned(let u) where u <= UInt64(Int.max): return Int(u)
        case .integer(let i): return Int(i)
        default: throw WireDecodingError("`\(key)` is not an integer")
        }
    }

    func optionalInteger(_ key: String) throws(WireDecodingError) -> Int? {
        if case .null = try value(key) { return nil }
        return try integer(key)
    }

    func unsigned(_ key: String) throws(WireDecodingError) -> UInt64 {
        guard case .unsigned(let u) = try value(key) else {
            throw WireDecodingError("`\(key)` is not an unsigned integer")
        }
        return u
    }

    func bool(_ key: String) throws(WireDecodingError) -> Bool {
        guard case .bool(let b) = try value(key) else { throw WireDecodingError("`\(key)` is not true or false") }
        return b
    }

    func optionalBool(_ key: String) throws(WireDecodingError) -> Bool? {
        guard object[key] != nil else { return nil }
        return try bool(key)
    }

    func object(_ key: String) throws(WireDecodingError) -> PayloadFields {
        guard case .object(let o) = try value(key) else { throw WireDecodingError("`\(key)` is not an object") }
        return PayloadFields(o)
    }

    /// An object that may be absent (nil); present, it must be an object.
    func optionalObject(_ key: String) throws(WireDecodingError) -> PayloadFields? {
        guard object[key] != nil else { return nil }
        return try self.object(key)
    }

    func vector(_ key: String) throws(WireDecodingError) -> Vector3 {
        let o = try object(key)
        do {
            return Vector3(try o.number("x"), try o.number("y"), try o.number("z"))
        } catch {
            throw WireDecodingError("`\(key)`: \(error.description)")
        }
    }

    /// `{"x","y","z","w"}` as a `Quaternion`.
    func quaternion(_ key: String) throws(WireDecodingError) -> Quaternion {
        let o = try object(key)
        do {
            return Quaternion(w: try o.number("w"), x: try o.number("x"), y: try o.number("y"), z: try o.number("z"))
        } catch {
            throw WireDecodingError("`\(key)`: \(error.description)")
        }
    }

    func text(_ key: String) throws(WireDecodingError) -> String {
        guard case .string(let text) = try value(key) else { throw WireDecodingError("`\(key)` is not a string") }
        return text
    }

    /// A choice written as `null` when there is none.
    func optionalChoice<T: RawRepresentable & CaseIterable>(_ key: String) throws(WireDecodingError) -> T?
    where T.RawValue == String {
        if case .null = try value(key) { return nil }
        return try choice(key) as T
    }

    func choice<T: RawRepresentable & CaseIterable>(_ key: String) throws(WireDecodingError) -> T
    where T.RawValue == String {
        guard case .string(let text) = try value(key) else { throw WireDecodingError("`\(key)` is not a string") }
        guard let v = T(rawValue: text) else {
            let allowed = T.allCases.map(\.rawValue).joined(separator: ", ")
            throw WireDecodingError("`\(key)` is \"\(text)\", not one of \(allowed)")
        }
        return v
    }
}
