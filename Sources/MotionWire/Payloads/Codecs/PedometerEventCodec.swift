import MotionModel

/// `{root}/pedometer/events`: Core Motion's `CMPedometerEvent`, a walk paused or resumed.
enum PedometerEventCodec: PayloadCodec {
    static func write(_ e: PedometerEvent, into b: inout JSONBuffer) {
        b.raw(",\"type\":")
        b.raw(e.type == .pause ? "\"pause\"" : "\"resume\"")
        b.raw(",\"date\":")
        b.number(e.date, decimals: 3)
    }

    static func read(_ o: PayloadFields, timestamp: Double) throws(WireDecodingError) -> PedometerEvent {
        PedometerEvent(date: try o.number("date"), type: try o.choice("type"))
    }

    static func summary(_ e: PedometerEvent) -> String { e.type.rawValue }
}
