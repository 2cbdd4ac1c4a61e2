import Foundation
import MotionEstimation
import MotionModel

/// The agent's activity on DSADS with each subject held out: every recording runs, per unit, through what the
/// agent runs — the shared step detector, `ActivityEstimator` with the model trained without that subject
/// (`ActivityFoldModels`) and `GaitActivityFusion` — and the fused activity is read once a second.
struct ActivityHeldOut {
    /// What the agent reported, once a second.
    enum Reported: Int, CaseIterable, CustomStringConvertible {
        case stationary, walking, running, cycling, automotive, unknown

        init(_ a: MotionActivity) {
            self =
                a.unknown
                ? .unknown
                : a.running
                    ? .running
                    : a.cycling
                        ? .cycling : a.walking ? .walking : a.automotive && !a.stationary ? .automotive : .stationary
        }

        var description: String { Self.names[rawValue] }
        static let names = ["stationary", "walking", "running", "cycling", "automotive", "unknown"]
    }

    /// The truth of a DSADS activity: one of Core Motion's classes, or none.
    enum Truth: Int, CaseIterable {
        case stationary, walking, running, cycling, none

        init(activity: Int) {
            switch DSADSRecording.coreMotionClass(activity: activity) {
            case .stationary: self = .stationary
            case .walking: self = .walking
            case .running: self = .running
            case .cycling: self = .cycling
            case .automotive, nil: self = .none
            }
        }

        static let names = ["stationary", "walking", "running", "cycling", "none"]

        /// Whether a report names this truth.
        func matches(_ r: Reported) -> Bool { self != .none && rawValue == r.rawValue }
    }

    /// One second of one unit of one recording.
    struct Second {
        var activity: Int
        var subject: Int
        var unit: DSADSRecording.Unit
        var truth: Truth
        var reported: Reported
        var confidence: MotionActivity.Confidence
        /// The classifier's own answer, before gait.
        var classifier: Reported
        /// Whether the step detector followed a gait then.
        var gait: Bool
        /// The classifier's smoothed probabilities.
        var smoothed: ActivityModel.Probabilities
        /// Seconds since the recording began.
        var time: Double
    }

    /// Runs one unit of one recording; `models` maps a held-out subject to its fold model.
    static func run(
        _ recording: DSADSRecording,
        unit: DSADSRecording.Unit,
        model: ActivityModel,
        settings: ActivityEstimator.Settings,
        rateHz: Double?,
        gait useGait: Bool
    ) -> [Second] {
        var detector = StepDetector()
        var estimator = ActivityEstimator(settings: settings, model: model)
        var fusion = GaitActivityFusion()
        var out: [Second] = []
        var lastWindow = -Double.infinity
        var walking = false
        for sample in recording.samples(unit: unit, rateHz: rateHz) {
            let reading =
                useGait ? sample.acceleration.map { detector.read(timestamp: sample.timestamp, acceleration: $0) } : nil
            _ = estimator.update(sample)
            _ = fusion.update(classifier: estimator.activity, gait: reading)
            if let r = reading { walking = r.isWalking }
            guard let o = estimator.lastObservation, o.time > lastWindow else { continue }
            lastWindow = o.time
            let fused = useGait ? fusion.activity : estimator.activity
            out.append(
                Second(
                    activity: recording.activity,
                    subject: recording.subject,
                    unit: unit,
                    truth: Truth(activity: recording.activity),
                    reported: Reported(fused),
                    confidence: fused.confidence,
                    classifier: Reported(estimator.activity),
                    gait: walking,
                    smoothed: estimator.smoothed,
                    time: o.time
                )
            )
        }
        return out
    }
}
