import Foundation
import MotionModel

/// `{root}/altimeter/absolute`: Core Motion's `CMAbsoluteAltitudeData`.
enum AbsoluteAltitudeCodec: PayloadCodec {
    static func write(_ a: AbsoluteAltitudeData, into b: inout JSONBuffer) {
        b.raw(",\"altitude\":")
        b.number(a.altitude, decimals: 2)
        b.raw(",\"accuracy\":")
        b.number(a.accuracy, decimals: 2)
        b.raw(",\"precision\":")
        b.number(a.precision, decimals: 3)
    }

    static func read(_ o: PayloadFields, timestamp: Double) throws(WireDecodingError) -> AbsoluteAltitudeData {
        AbsoluteAltitudeData(
            timestamp: timestamp,
            altitude: try o.number("altitude"),
            accuracy: try o.number("accuracy"),
            precision: try o.number("precision")
        )
    }

    static func summary(_ a: AbsoluteAltitudeData) -> String {
        String(format: "altitude=%.1f m", a.altitude)
    }
}
