import Foundation
import MotionModel

/// `{root}/altimeter`: Core Motion's `CMAltitudeData`, the change since the stream started and the pressure.
enum AltitudeCodec: PayloadCodec {
    static func write(_ a: AltitudeData, into b: inout JSONBuffer) {
        b.raw(",\"relativeAltitude\":")
        b.number(a.relativeAltitude, decimals: 3)
        b.raw(",\"pressure\":")
        b.number(a.pressureKPa, decimals: 5)
    }

    static func read(_ o: PayloadFields, timestamp: Double) throws(WireDecodingError) -> AltitudeData {
        AltitudeData(
            timestamp: timestamp,
            relativeAltitude: try o.number("relativeAltitude"),
            pressureKPa: try o.number("pressure")
        )
    }

    static func summary(_ a: AltitudeData) -> String {
        String(format: "relative=%+.2f m pressure=%.3f kPa", a.relativeAltitude, a.pressureKPa)
    }
}
