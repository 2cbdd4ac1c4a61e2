import MotionModel

/// The activity as the agent reports it: the window classifier's answer, completed by gait.
///
/// The classifier (`ActivityEstimator`) was trained and validated on real walking, running and cycling
/// (DSADS, people held out), so where it says walking, running or cycling its answer stands. A regular step
/// rhythm followed by the step detector is still strong evidence the classifier may lack: without a gyroscope
/// it says unknown, and a phone held steadily in the hand while walking can look still or like a vehicle to
/// magnitude statistics — so while the detector follows a walk and the classifier says stationary, automotive
/// or unknown, the activity is walking (running from `runningCadence` steps/s), dated from the walk's first
/// step. Walking from gait alone has confidence `high` (the detector is measured on the Oxford walks), running
/// from cadence alone `low` (nothing here measured running from cadence alone).
package struct GaitActivityFusion: Sendable {
    /// Steps per second from which a followed gait is running: walking tops out near 2.3–2.5 steps/s,
    /// running starts around 2.5 (e.g. Minetti 2002 on the walk–run transition).
    package static let runningCadence = 2.45

    /// The fused activity (unknown until the classifier or the gait says otherwise).
    package private(set) var activity = MotionActivity(startDate: 0, unknown: true, confidence: .low)
    /// When the current walk began (back-dated to its first step by the detector).
    private var walkStart = 0.0
    /// The latest gait reading (a sample without acceleration keeps it).
    private var gait = StepDetector.Reading()

    package init() {}

    /// Combines the classifier's current activity with the gait reading of the same sample (nil: the
    /// sample had no acceleration); returns the fused activity when its flags or confidence changed.
    package mutating func update(classifier: MotionActivity, gait reading: StepDetector.Reading?) -> MotionActivity? {
        if let r = reading {
            gait = r
            if let start = r.update.walkStarted { walkStart = start }
        }
        var next = classifier
        let classifierMoves = classifier.walking || classifier.running || classifier.cycling
        if let cadence = gait.cadence, !classifierMoves {
            let run = cadence >= Self.runningCadence
            next = MotionActivity(
                startDate: classifier.startDate,
                walking: !run,
                running: run,
                confidence: run ? .low : .high
            )
        }
        if !next.hasSameFlags(as: activity) {
            if gait.cadence != nil && !classifierMoves && !(activity.walking || activity.running) {
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
