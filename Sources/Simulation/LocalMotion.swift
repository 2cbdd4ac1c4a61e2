/// One instant of a segment, in the segment's own frame: headings relative to the segment's start, the
/// ground at the segment's start at 0 m, counters from the segment's start.
struct LocalMotion: Sendable {
    /// The device's frame.
    var frame: KinematicFrame
    /// Heading of the person or vehicle, rad (what the next segment continues from).
    var heading: Double
    /// Ground level under the person, m (stairs and lifts change it).
    var ground: Double
    var steps: Int
    /// Metres on foot.
    var distance: Double
    var floorsAscended: Int
    var floorsDescended: Int
    /// Steps per second.
    var cadence: Double
    /// Speed along the path, m/s.
    var speed: Double
    var activity: SimulationActivity
    var isTransition = false
}
