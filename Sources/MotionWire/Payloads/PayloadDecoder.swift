import AgentPorts
import Foundation
import MotionModel

/// Reads every stream payload back (docs/payloads.md): a single JSON message, a JSON batch
/// `{"batch":[message, …]}` or a binary batch. Strict: a missing or mistyped field is an error naming it. Off the
/// hot path (subscribers, `sub`, `watch`, the benchmark, tests), so it may allocate.
public enum PayloadDecoder {
    /// The samples of one message on a topic of `kind`, in order.
    public static func decode(_ bytes: [UInt8], kind: PayloadKind) throws(WireDecodingError) -> [WireMessage] {
        if BinaryBatchReader.isBinary(bytes) {
            guard let binary = kind.binaryKind else {
                throw WireDecodingError("a binary payload on \(kind.subject.path), which is only ever JSON")
            }
            return try BinaryBatchReader.decode(bytes, kind: binary)
        }
        let parsed: JSONValue
        do {
            parsed = try JSONValue.parse(bytes)
        } catch {
            throw WireDecodingError("not JSON: \(error)")
        }
        guard case .object(let object) = parsed else { throw WireDecodingError("not a JSON object") }
        if let batch = object["batch"] {
            guard case .array(let items) = batch else { throw WireDecodingError("`batch` is not an array") }
            var messages: [WireMessage] = []
            for (i, item) in items.enumerated() {
                guard case .object(let sample) = item else { throw WireDecodingError("batch[\(i)] is not an object") }
                do {
                    messages.append(try message(Fields(sample), kind: kind))
                } catch {
                    throw WireDecodingError("batch[\(i)]: \(error.description)")
                }
            }
            return messages
        }
        return [try message(Fields(object), kind: kind)]
    }

    private static func message(_ o: Fields, kind: PayloadKind) throws(WireDecodingError) -> WireMessage {
        let timestamp = try o.number("timestamp")
        let envelope = MessageEnvelope(
            seq: try o.unsigned("seq"),
            timestamp: timestamp,
            time: try o.number("time"),
            clockSynchronized: try o.optionalBool("clockSynchronized") ?? true
        )
        let payload: StreamPayload
        switch kind {
        case .accelerometer: payload = .acceleration(try o.vector("acceleration"))
        case .gyroscope: payload = .rotationRate(try o.vector("rotationRate"))
        case .magnetometer: payload = .magneticField(try o.vector("magneticField"))
        case .deviceMotion:
            let attitude = try o.object("attitude")
            let q = try attitude.object("quaternion")
            let field = try o.object("magneticField")
            var motion = DeviceMotion(
                timestamp: timestamp,
                attitude: Quaternion(
                    w: try q.number("w"),
                    x: try q.number("x"),
                    y: try q.number("y"),
                    z: try q.number("z")
                ),
                rotationRate: try o.vector("rotationRate"),
                gravity: try o.vector("gravity"),
                userAcceleration: try o.vector("userAcceleration"),
                magneticField: try field.vector("field"),
                magneticFieldAccuracy: try field.choice("accuracy"),
                heading: try o.number("heading"),
                referenceFrame: try o.choice("referenceFrame"),
                inclinationAccuracy: try o.numberIfPresent("inclinationAccuracy") ?? -1,
                headingAccuracy: try o.numberIfPresent("headingAccuracy") ?? -1
            )
            if let relative = try o.optionalObject("relativeAttitude") {
                let r = try relative.object("quaternion")
                motion.relativeAttitude = RelativeAttitude(
                    quaternion: Quaternion(
                        w: try r.number("w"),
                        x: try r.number("x"),
                        y: try r.number("y"),
                        z: try r.number("z")
                    ),
                    referenceTime: try relative.number("referenceTime")
                )
            }
            payload = .deviceMotion(motion)
        case .pedometer:
            payload = .pedometer(
                PedometerData(
                    startDate: try o.number("startDate"),
                    endDate: try o.number("endDate"),
                    numberOfSteps: try o.integer("numberOfSteps"),
                    distance: try o.optionalNumber("distance"),
                    floorsAscended: try o.optionalInteger("floorsAscended"),
                    floorsDescended: try o.optionalInteger("floorsDescended"),
                    currentPace: try o.optionalNumber("currentPace"),
                    currentCadence: try o.optionalNumber("currentCadence"),
                    averageActivePace: try o.optionalNumber("averageActivePace")
                )
            )
        case .pedometerEvents:
            payload = .pedometerEvent(PedometerEvent(date: try o.number("date"), type: try o.choice("type")))
        case .activity:
            payload = .activity(
                MotionActivity(
                    startDate: try o.number("startDate"),
                    stationary: try o.bool("stationary"),
                    walking: try o.bool("walking"),
                    running: try o.bool("running"),
                    automotive: try o.bool("automotive"),
                    cycling: try o.bool("cycling"),
                    unknown: try o.bool("unknown"),
                    confidence: try o.choice("confidence")
                )
            )
        case .altimeter:
            payload = .altitude(
                AltitudeData(
                    timestamp: timestamp,
                    relativeAltitude: try o.number("relativeAltitude"),
                    pressureKPa: try o.number("pressure")
                )
            )
        case .absoluteAltitude:
            payload = .absoluteAltitude(
                AbsoluteAltitudeData(
                    timestamp: timestamp,
                    altitude: try o.number("altitude"),
                    accuracy: try o.number("accuracy"),
                    precision: try o.number("precision")
                )
            )
        case .submersion:
            payload = .submersion(
                SubmersionData(
                    timestamp: timestamp,
                    state: try o.choice("state"),
                    depth: try o.number("depth"),
                    pressureKPa: try o.number("pressure"),
                    surfacePressureKPa: try o.number("surfacePressure"),
                    temperatureC: try o.optionalNumber("temperature")
                )
            )
        }
        return WireMessage(envelope: envelope, payload: payload)
    }
}

/// Typed access to a parsed JSON object, with errors that name the field.
private struct Fields {
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

    func object(_ key: String) throws(WireDecodingError) -> Fields {
        guard case .object(let o) = try value(key) else { throw WireDecodingError("`\(key)` is not an object") }
        return Fields(o)
    }

    /// An object that may be absent (nil); present, it must be an object.
    func optionalObject(_ key: String) throws(WireDecodingError) -> Fields? {
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
