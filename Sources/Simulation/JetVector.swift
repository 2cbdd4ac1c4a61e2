import MotionModel

/// Three `Jet`s: a point (or displacement) with its velocity and acceleration.
struct JetVector: Sendable {
    var x: Jet
    var y: Jet
    var z: Jet

    @inline(__always)
    init(_ x: Jet, _ y: Jet, _ z: Jet) {
        self.x = x
        self.y = y
        self.z = z
    }

    static let zero = JetVector(.zero, .zero, .zero)

    var value: Vector3 { Vector3(x.v, y.v, z.v) }
    var rate: Vector3 { Vector3(x.d, y.d, z.d) }
    var acceleration: Vector3 { Vector3(x.dd, y.dd, z.dd) }
}
