import Foundation
import MotionModel

/// `{root}/submersion`: Core Motion's `CMWaterSubmersionEvent` state with its depth, pressures and temperature.
enum SubmersionCodec: PayloadCodec {
    static func write(_ s: SubmersionData, into b: inout JSONBuffer) {
        b.raw(",\"state\":")
        b.string(s.state.rawValue)
        b.raw(",\"depth\":")
        b.number(s.depth, decimals: 3)
        b.raw(",\"pressure\":")
        b.number(s.pressureKPa, decimals: 4)
        b.raw(",\"surfacePressure\":")
        b.number(s.surfacePressureKPa, decimals: 4)
        b.raw(",\"temperature\":")
        optional(s.temperatureC, decimals: 2, &b)
    }

    static func read(_ o: PayloadFields, timestamp: Double) throws(WireDecodingError) -> SubmersionData {
        SubmersionData(
            timestamp: timestamp,
            state: try o.choice("state"),
            depth: try o.number("depth"),
            pressureKPa: try o.number("pressure"),
            surfacePressureKPa: try o.number("surfacePressure"),
            temperatureC: try o.optionalNumber("temperature")
        )
    }

    static func summary(_ s: SubmersionData) -> String {
        String(format: "depth=%.2f m state=%@", s.depth, s.state.rawValue)
    }
}
