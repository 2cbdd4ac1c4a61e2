import MotionModel

/// What the activity classifier sees of the samples: every second, the features of the last 5 s
/// (`ActivityFeatures`) on the fixed 25 Hz grid of `ActivityResampler`, held in `ActivityWindow`.
///
/// One grid for everything, whatever the sensor's rate: DSADS, which trains the motion model, was recorded at
/// 25 Hz, and TMD's app, whose windows train the vehicle model, registered sensor events at most 20 times a
/// second (the Bologna project's tutorial, cs.unibo.it/projects/us-tm2017) — so a 100 Hz stream's statistics
/// taken at 100 Hz would hold more vibration, and larger extremes, than either set ever showed.
///
/// Fixed capacity, allocated once: `add` allocates nothing.
package struct ActivityFeatureExtractor: Sendable {
    /// One window, ready to classify.
    package struct Observation: Sendable {
        /// The time of the sample that completed the window, s.
        package var time: Double
        package var features: ActivityFeatures
    }

    /// Bins between two observations: one second.
    package static let hopBins = Int(ActivityResampler.rateHz)

    private var resampler = ActivityResampler()
    private var window = ActivityWindow()
    private var binsSinceHop = 0

    package init() {}

    /// Whether the samples since the last gap carried a gyroscope (the classifier needs one).
    package var hasRotation: Bool { resampler.hasRotation }

    /// Feeds one sample; returns the window's observation when a hop completes with the window full.
    package mutating func add(_ sample: IMUSample) -> Observation? {
        let t = sample.timestamp
        guard t.isFinite else { return nil }
        let a = sample.acceleration.flatMap { $0.isFinite ? $0 : nil }
        let w = sample.rotationRate.flatMap { $0.isFinite ? $0 : nil }
        guard a != nil || w != nil else { return nil }
        if resampler.add(timestamp: t, acceleration: a, rotationRate: w) == .restarted {
            window.clear()
            binsSinceHop = 0
        }
        var hopDue = false
        while let bin = resampler.nextBin() {
            window.append(bin)
            binsSinceHop += 1
            if binsSinceHop >= Self.hopBins {
                binsSinceHop = 0
                hopDue = true
            }
        }
        guard hopDue, let features = window.features() else { return nil }
        return Observation(time: t, features: features)
    }
}
