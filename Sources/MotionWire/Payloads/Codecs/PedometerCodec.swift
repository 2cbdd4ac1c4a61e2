import Foundation
import MotionModel

/// `{root}/pedometer`: Core Motion's `CMPedometerData`, the counts since the stream started.
enum PedometerCodec: PayloadCodec {
    static func write(_ p: PedometerData, into b: inout JSONBuffer) {
        b.raw(",\"startDate\":")
        b.number(p.startDate, decimals: 3)
        b.raw(",\"endDate\":")
        b.number(p.endDate, decimals: 3)
        b.raw(",\"numberOfSteps\":")
        b.integer(p.numberOfSteps)
        b.raw(",\"distance\":")
        optional(p.distance, decimals: 2, &b)
        b.raw(",\"floorsAscended\":")
        optional(p.floorsAscended, &b)
        b.raw(",\"floorsDescended\":")
        optional(p.floorsDescended, &b)
        b.raw(",\"currentPace\":")
        optional(p.currentPace, decimals: 4, &b)
        b.raw(",\"currentCadence\":")
        optional(p.currentCadence, decimals: 4, &b)
        b.raw(",\"averageActivePace\":")
        optional(p.averageActivePace, decimals: 4, &b)
    }

    static func read(_ o: PayloadFields, timestamp: Double) throws(WireDecodingError) -> PedometerData {
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
    }

    static func summary(_ p: PedometerData) -> String {
        var text = "steps=\(p.numberOfSteps)"
        if let d = p.distance { text += String(format: " distance=%.1f m", d) }
        if let c = p.currentCadence { text += String(format: " cadence=%.2f/s", c) }
        return text
    }
}
