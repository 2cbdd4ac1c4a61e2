import MotionModel

/// A fall scripted into the virtual device's accelerometer — not a physical model of a body, a shape the
/// detector must take for a fall: lying face up, 0.3 s of free fall, a 30 ms landing at about 5 g, then still on
/// its side (gravity along x: a 90° change of orientation) for good. Only the accelerometer moves (the
/// gyroscope keeps reading a device at rest), so a test of it runs the accelerometer alone, as many devices do.
/// The detector's accuracy is measured on real falls (SisFall, BENCHMARKS.md); this drives the agent's paths.
package struct ScriptedFall: Sendable, Equatable {
    /// When the free fall starts, s on the monotonic (sample) clock.
    package var start: Double

    package static let freeFallSeconds = 0.3
    package static let impactSeconds = 0.03

    package init(start: Double) { self.start = start }

    /// The specific force the script replaces a resting device's (0, 0, −1) g with at `time`; nil before it.
    package func acceleration(at time: Double) -> Vector3? {
        guard time >= start else { return nil }
        let t = time - start
        if t < Self.freeFallSeconds { return Vector3(x: 0, y: 0, z: 0) }
        if t < Self.freeFallSeconds + Self.impactSeconds { return Vector3(x: 1, y: 0, z: -4.9) }
        return Vector3(x: 1, y: 0, z: 0)
    }
}
