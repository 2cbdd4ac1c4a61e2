import MotionModel

/// `{root}/activity`: Core Motion's `CMMotionActivity`, every flag and the confidence.
enum MotionActivityCodec: PayloadCodec {
    static func write(_ a: MotionActivity, into b: inout JSONBuffer) {
        b.raw(",\"startDate\":")
        b.number(a.startDate, decimals: 3)
        b.raw(",\"stationary\":")
        b.bool(a.stationary)
        b.raw(",\"walking\":")
        b.bool(a.walking)
        b.raw(",\"running\":")
        b.bool(a.running)
        b.raw(",\"cycling\":")
        b.bool(a.cycling)
        b.raw(",\"automotive\":")
        b.bool(a.automotive)
        b.raw(",\"unknown\":")
        b.bool(a.unknown)
        b.raw(",\"confidence\":")
        switch a.confidence {
        case .low: b.raw("\"low\"")
        case .medium: b.raw("\"medium\"")
        case .high: b.raw("\"high\"")
        }
    }

    static func read(_ o: PayloadFields, timestamp: Double) throws(WireDecodingError) -> MotionActivity {
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
    }

    static func summary(_ a: MotionActivity) -> String {
        let flags = [
            ("stationary", a.stationary), ("walking", a.walking), ("running", a.running),
            ("cycling", a.cycling), ("automotive", a.automotive), ("unknown", a.unknown),
        ].filter(\.1).map(\.0)
        return (flags.isEmpty ? "none" : flags.joined(separator: "+")) + " (\(a.confidence.rawValue))"
    }
}
