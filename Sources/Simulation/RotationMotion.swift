import MotionModel

/// The phone on a table, turned by hand about one of its own axes at a time, each turn a smooth
/// (smootherstep) profile so the rate rises from 0 to 1.875 × the mean rate and back; pauses between.
/// The script's turns cancel, so the phone ends each cycle where it began and the cycle repeats.
///
/// The rotation is about the device's centre: the accelerometer sees gravity only.
struct RotationMotion: Sendable {
    /// One turn: about a device axis, by an angle (rad), over a time (s), then still for a pause (s).
    struct Turn: Sendable {
        var axis: Vector3
        var angle: Double
        var duration: Double
        var pause: Double
    }

    static let leadIn = 2.0

    /// z: 360° in 6 s (mean 60 °/s, peak 113 °/s), then ±90° about x and y, full flips about x and y,
    /// and fast ±180° turns about z (peak 169 °/s).
    static let script: [Turn] = [
        Turn(axis: Vector3(0, 0, 1), angle: 2 * .pi, duration: 6, pause: 2),
        Turn(axis: Vector3(1, 0, 0), angle: .pi / 2, duration: 3, pause: 1.5),
        Turn(axis: Vector3(1, 0, 0), angle: -.pi / 2, duration: 3, pause: 1.5),
        Turn(axis: Vector3(0, 1, 0), angle: .pi / 2, duration: 3, pause: 1.5),
        Turn(axis: Vector3(0, 1, 0), angle: -.pi / 2, duration: 3, pause: 1.5),
        Turn(axis: Vector3(1, 0, 0), angle: 2 * .pi, duration: 6, pause: 2),
        Turn(axis: Vector3(0, 1, 0), angle: -2 * .pi, duration: 6, pause: 2),
        Turn(axis: Vector3(0, 0, 1), angle: -.pi, duration: 2, pause: 1),
        Turn(axis: Vector3(0, 0, 1), angle: .pi, duration: 2, pause: 1),
    ]

    /// Attitude (device → table frame) before each turn, and when each turn starts.
    private var before: [Quaternion]
    private var starts: [Double]
    let duration: Double

    init() {
        var q = Quaternion.identity
        var t = RotationMotion.leadIn
        var before: [Quaternion] = []
        var starts: [Double] = []
        for turn in RotationMotion.script {
            before.append(q)
            starts.append(t)
            q = (q * Quaternion(axis: turn.axis, angle: turn.angle)).normalized
            t += turn.duration + turn.pause
        }
        self.before = before
        self.starts = starts
        duration = t
    }

    func evaluate(at tau: Double) -> LocalMotion {
        var index = -1
        for i in 0..<starts.count where tau >= starts[i] { index = i }
        var frame = KinematicFrame.path(distance: .zero, heading: .zero, altitude: .zero)
            .translated(by: Placement.tableOffset)
            .rotated(by: Placement.faceUpTopForward)
        if index >= 0 {
            let turn = RotationMotion.script[index]
            let progress = Profile.smootherstep(Jet.time(tau - starts[index]) * (1 / turn.duration))
            frame = frame.rotated(by: before[index]).rotated(about: turn.axis, by: progress * turn.angle)
        }
        return LocalMotion(
            frame: frame,
            heading: 0,
            ground: 0,
            steps: 0,
            distance: 0,
            floorsAscended: 0,
            floorsDescended: 0,
            cadence: 0,
            speed: 0,
            activity: .stationary
        )
    }
}
