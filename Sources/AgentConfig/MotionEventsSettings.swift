/// Settings only the events stream has (`streams.events.falls`, `impact_threshold_g`, …): which motion events
/// the detector reports and the thresholds an operator tunes per fleet. Every other detector parameter keeps the
/// value it was chosen with on SisFall (BENCHMARKS.md, "Falls"): they are one set for every placement and rate.
package struct MotionEventsSettings: Sendable, Equatable {
    /// Falls, then one follow-up with their resolution.
    package var falls = true
    /// Impacts: the acceleration's magnitude above `impactThresholdG`.
    package var impacts = true
    /// Free falls: the magnitude near 0 g long enough to be a drop.
    package var freeFalls = true
    /// Tilt: the attitude leaving a cone of `tiltConeDegrees` around the reference attitude, and coming back.
    package var tilt = false
    /// An impact is a peak above this, g.
    package var impactThresholdG = 3.0
    /// A fall not resolved by an operator becomes `rejected` when the wearer is active within this many seconds
    /// of its detection, `unresponsive` when still past it.
    package var fallResponseSeconds = 60.0
    /// The tilt cone's half-angle, degrees.
    package var tiltConeDegrees = 30.0

    package init() {}

    /// Accepted ranges, shared by the config schema and its messages.
    package static let impactThresholdRange = 1.5...16.0
    package static let fallResponseRange = 10.0...600.0
    package static let tiltConeRange = 5.0...85.0
}
