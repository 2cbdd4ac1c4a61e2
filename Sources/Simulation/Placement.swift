import MotionModel

/// Where the phone is, as a constant pose relative to the person (or car) frame: x forward, y left, z up,
/// origin on the ground (or road) below the person.
///
/// Only the rest pose lives here; the motion about it (hand sway, thigh swing, vibration) belongs to the
/// segment that moves it.
enum Placement: Sendable, Equatable {
    /// Lying face up on a table, top edge pointing forward.
    case table
    /// Held in front of the chest, screen tilted 35° up toward the face, top edge forward.
    case hand
    /// In the left front trouser pocket: top edge up toward the hip, screen facing forward.
    case pocket
    /// Lying in a car's centre-console tray, face up, top edge forward.
    case carTray

    /// Hip height above the ground, m (adult, ≈ 0.53 × stature for 1.78 m).
    static let hipHeight = 0.95
    /// Hip joint to the phone's centre along the thigh, m.
    static let thighLength = 0.2

    /// Unit axes of the person frame.
    static let forward = Vector3(1, 0, 0)
    static let left = Vector3(0, 1, 0)
    static let up = Vector3(0, 0, 1)

    /// Device axes → person axes for a phone lying face up with its top edge forward: device y forward,
    /// x to the right, z up (a −90° turn about up).
    static let faceUpTopForward = Quaternion(axis: up, angle: -.pi / 2)
    /// Hand mount: face up top forward, then tilted about the device x axis so the top rises by 35°.
    static let handMount = faceUpTopForward * Quaternion(axis: Vector3(1, 0, 0), angle: 35 * .pi / 180)
    /// Pocket mount: device x left, y up, z forward (the 120° turn about (1, 1, 1) that cycles the axes).
    static let pocketMount = Quaternion(w: 0.5, x: 0.5, y: 0.5, z: 0.5)

    /// Hand position relative to the hip, m.
    static let handOffset = Vector3(0.30, -0.10, 0.30)
    /// Left trouser pocket hinge (hip joint) relative to the hip centre, m.
    static let pocketHipOffset = Vector3(0.05, 0.10, 0)
    /// Table top height and where the phone lies on it, m.
    static let tableOffset = Vector3(0.4, 0, 0.75)
    /// Console tray position relative to the car's ground point below the driver, m.
    static let trayOffset = Vector3(0.45, -0.35, 0.55)
}
