import MotionModel

/// The activity as the agent reports it: the window classifier's answer, overruled by gait.
///
/// A regular step rhythm is the strongest sign of walking or running there is — the classifier sees only
/// magnitude statistics over 5 s (and needs a gyroscope), and a phone held steadily in the hand while
/// walking can look like a vehicle to it — so while the step detector follows a walk, the activity is
/// walking with high confidence, dated from the walk's first step. Running (from `runningCadence`, or
/// when the classifier says so) keeps confidence `low`: the detector's counts are measured on real walks,
/// but nothing tells running from fast walking on real data yet (`ActivityEstimator.isValidatedOnRealData`).
public struct GaitActivityFusion: Sendable {
    /// Steps per second from which a followed gait is running: walking tops out near 2.3–2.5 steps/s,
    /// running starts around 2.5 (e.g. Minetti 2002 on the walk–run transition).
    public static let runningCadence = 2.45

    /// The fused activity (unknown until the classifier or the gait says otherwise).
    public private(set) var activity = MotionActivity(startDate: 0, unknown: true, confidence: .low)
    /// When the current walk began (back-dated to its first step by the detector).
    private var walkStart = 0.0
    /// The latest gait reading (a sample without acceleration keeps it).
    private var gait = StepDetector.Reading()

    public init() {}

    /// Combines the classifier's current activity with the gait reading of the same sample (nil: the
    /// sample had no acceleration); returns the fused activity when its flags or confidence changed.
    public mutating func update(classifier: MotionActivity, gait reading: StepDetector.Reading?) -> MotionActivity? {
        if let r = reading {
            gait = r
            if let start = r.update.walkStarted { walkStart = start }
        }
        var next = classifier
        if let cadence = gait.cadence {
            let run = cadence >= Self.runningCadence || classifier.running
            next = MotionActivity(
                startDate: classifier.startDate,
                walking: !run,
                running: run,
                confidence: run ? .low : .high
            )
        }
        if !next.hasSameFlags(as: activity) {
            if gait.cadence != nil && !(activity.walking || activity.running) {
                next.startDate = walkStart
            }
            activity = next
            return activity
        }
        guard next.confidence != activity.confidence else { return nil }
        activity.confidence = next.confidence
        return activity
    }
}
