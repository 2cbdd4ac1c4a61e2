import Foundation
import MotionEstimation
import MotionModel

/// The classifier's features of every DSADS window, through the agent's own front end (`ActivityResampler`,
/// `ActivityWindow`) — what `scripts/research/activity/train_activity.py` trains on, so training and the agent
/// read the same numbers.
enum ActivityFeatureDump {
    /// Writes one CSV row per window and hop: subject, activity, unit, rate, window end (s), the features.
    static func write(recordings: [DSADSRecording], ratesHz: [Double?], to path: String) throws {
        var out = "subject,activity,unit,rate,t," + ActivityFeatures.names.joined(separator: ",") + "\n"
        for recording in recordings {
            for unit in DSADSRecording.Unit.allCases {
                for rate in ratesHz {
                    let samples = recording.samples(unit: unit, rateHz: rate)
                    for o in observations(samples) {
                        out += "\(recording.subject),\(recording.activity),\(unit),\(Int(rate ?? 25)),"
                        out += String(format: "%.3f", o.time)
                        for i in ActivityFeatures.names.indices { out += "," + String(o.features[i]) }
                        out += "\n"
                    }
                }
            }
        }
        try out.write(toFile: path, atomically: true, encoding: .utf8)
    }

    /// The observation of every full window, one a second.
    static func observations(_ samples: [IMUSample]) -> [ActivityFeatureExtractor.Observation] {
        var extractor = ActivityFeatureExtractor()
        var out: [ActivityFeatureExtractor.Observation] = []
        for s in samples {
            if let o = extractor.add(s) { out.append(o) }
        }
        return out
    }
}
