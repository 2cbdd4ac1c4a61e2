import MotionEstimation
import MotionModel

/// The one step detector behind the pedometer and activity streams: whichever of them sees a sample first
/// runs the detector on it, the other reads the same result, so the step logic runs once per sample and
/// both streams agree on whether (and how fast) the user walks.
///
/// Owned by the stream catalog and called only under the hub's lock (like the streams themselves), hence
/// `@unchecked Sendable`.
package final class SharedGait: @unchecked Sendable {
    private var detector: StepDetector
    private var lastTimestamp = -Double.infinity
    private var last = StepDetector.Reading()

    package init(settings: StepDetector.Settings = .defaults) {
        detector = StepDetector(settings: settings)
    }

    /// The detector's reading of `sample` (nil without acceleration), run at most once per sample time.
    package func reading(for sample: IMUSample) -> StepDetector.Reading? {
        guard let a = sample.acceleration else { return nil }
        if sample.timestamp == lastTimestamp { return last }
        lastTimestamp = sample.timestamp
        last = detector.read(timestamp: sample.timestamp, acceleration: a)
        return last
    }

    /// Steps the detector counted since start (diagnostics).
    package var stepCount: Int { detector.stepCount }
}
