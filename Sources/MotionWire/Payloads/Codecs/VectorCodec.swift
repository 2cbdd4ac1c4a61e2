import Foundation
import MotionModel

/// The raw sensors' payloads: one vector under the payload's key, at the resolution its unit calls for.
protocol VectorCodec: PayloadCodec where Value == Vector3 {
    /// The key as `write` opens it: `,"acceleration":`.
    static var openingKey: StaticString { get }
    static var key: String { get }
    static var decimals: Int { get }
    static var unit: String { get }
}

extension VectorCodec {
    static func write(_ value: Vector3, into b: inout JSONBuffer) {
        b.raw(openingKey)
        b.vector(value, decimals: decimals)
    }

    static func read(_ fields: PayloadFields, timestamp: Double) throws(WireDecodingError) -> Vector3 {
        try fields.vector(key)
    }

    static func summary(_ value: Vector3) -> String {
        triple(value) + " " + unit
    }

    static func triple(_ v: Vector3) -> String {
        String(format: "x=%+.4f y=%+.4f z=%+.4f", v.x, v.y, v.z)
    }
}

/// `{root}/accelerometer`: g, Core Motion's sign.
enum AccelerationCodec: VectorCodec {
    static var openingKey: StaticString { ",\"acceleration\":" }
    static var key: String { "acceleration" }
    static var decimals: Int { 6 }  // µg resolution: below any MEMS accelerometer's noise floor
    static var unit: String { "g" }

    static func summary(_ value: Vector3) -> String {
        triple(value) + String(format: "  |a|=%.3f g", value.norm)
    }
}

/// `{root}/gyroscope`: rad/s, raw.
enum RotationRateCodec: VectorCodec {
    static var openingKey: StaticString { ",\"rotationRate\":" }
    static var key: String { "rotationRate" }
    static var decimals: Int { 6 }  // µrad/s
    static var unit: String { "rad/s" }
}

/// `{root}/magnetometer`: µT, raw.
enum MagneticFieldCodec: VectorCodec {
    static var openingKey: StaticString { ",\"magneticField\":" }
    static var key: String { "magneticField" }
    static var decimals: Int { 3 }  // nT
    static var unit: String { "µT" }
}
