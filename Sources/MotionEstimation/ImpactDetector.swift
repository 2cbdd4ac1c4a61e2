import MotionModel

/// Impacts: the acceleration magnitude above `thresholdG`. An impact starts at the first sample above the
/// threshold and ends at the first sample below it that is followed by `mergeGapSeconds` without another sample
/// above it (one knock's rebounds are one impact); it is reported then, with its peak and duration.
package struct ImpactDetector: Sendable {
    package struct Settings: Sendable, Equatable {
        /// |a| above which an impact begins, g.
        package var thresholdG: Double
        /// Samples above the threshold closer than this belong to one impact, s.
        package var mergeGapSeconds: Double

        package init(thresholdG: Double, mergeGapSeconds: Double) {
            self.thresholdG = thresholdG
            self.mergeGapSeconds = mergeGapSeconds
        }

        /// 3 g: above every walking and slow-stairs trial of SisFall at the waist (D01, D02, D05: peaks up to
        /// 2.8 g); jogging, fast stairs, sitting down hard, stumbles, jumps and falls exceed it (`tune_falls.py`
        /// prints the share per activity). 0.1 s merges a knock's rebounds.
        package static let defaults = Settings(thresholdG: 3, mergeGapSeconds: 0.1)
    }

    /// Read at every sample: `MotionEventDetector.reconfigure` changes them between two.
    package internal(set) var settings: Settings
    private var inImpact = false
    private var start = 0.0
    private var peak = 0.0
    private var lastAbove = 0.0
    /// The first sample below the threshold after the last one above it (the impact's end), s.
    private var end: Double?

    package init(settings: Settings = .defaults) {
        self.settings = settings
    }

    /// Feeds |a| (g) at `timestamp` (s); returns the impact that ended here.
    package mutating func update(timestamp t: Double, magnitude m: Double) -> ImpactEvent? {
        guard t.isFinite, m.isFinite else { return nil }
        if m >= settings.thresholdG {
            if !inImpact {
                inImpact = true
                start = t
                peak = m
            }
            peak = max(peak, m)
            lastAbove = t
            end = nil
            return nil
        }
        guard inImpact else { return nil }
        let e = end ?? t
        end = e
        // A timestamp going backwards ends the impact too: its gap cannot be measured.
        guard t - lastAbove >= settings.mergeGapSeconds || t < lastAbove else { return nil }
        inImpact = false
        end = nil
        return ImpactEvent(date: start, peakAcceleration: peak, duration: max(e - start, 0))
    }
}
