import MotionModel

/// Free fall: the acceleration magnitude below `thresholdG` for at least `minimumDurationSeconds`, reported when
/// it ends (the first sample back above the threshold), with the height a body falls from rest in that time.
package struct FreeFallDetector: Sendable {
    package struct Settings: Sendable, Equatable {
        /// |a| below which the device counts as falling freely, g.
        package var thresholdG: Double
        /// The shortest free fall reported, s.
        package var minimumDurationSeconds: Double

        package init(thresholdG: Double, minimumDurationSeconds: Double) {
            self.thresholdG = thresholdG
            self.minimumDurationSeconds = minimumDurationSeconds
        }

        /// 0.4 g for 0.15 s (a drop of 11 cm): inside the ranges Analog Devices gives for the ADXL345's free-fall
        /// interrupt (300–600 mg, 100–350 ms). On SisFall's waist device no walking, slow-stairs or slow-sitting
        /// trial stays below 0.4 g that long; 35 of 45 gentle jumps, 7 of 27 jogging trials, 4 of 65 quick sits
        /// on a low chair and 23 of 675 falls do (`tune_falls.py` prints the share per activity).
        package static let defaults = Settings(thresholdG: 0.4, minimumDurationSeconds: 0.15)
    }

    /// Read at every sample: `MotionEventDetector.reconfigure` changes them between two.
    package internal(set) var settings: Settings
    private var start: Double?

    package init(settings: Settings = .defaults) {
        self.settings = settings
    }

    /// Feeds |a| (g) at `timestamp` (s); returns the free fall that ended here.
    package mutating func update(timestamp t: Double, magnitude m: Double) -> FreeFallEvent? {
        guard t.isFinite, m.isFinite else { return nil }
        if m < settings.thresholdG {
            if start.map({ t < $0 }) ?? true { start = t }
            return nil
        }
        guard let s = start else { return nil }
        start = nil
        let duration = t - s
        guard duration >= settings.minimumDurationSeconds else { return nil }
        return FreeFallEvent(date: s, duration: duration, height: FreeFallEvent.height(falling: duration))
    }
}
