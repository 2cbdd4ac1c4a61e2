import Foundation
import MotionModel
import Testing

@Suite struct AttitudeEulerTests {
    static let angles: [(roll: Double, pitch: Double, yaw: Double)] = [
        (0, 0, 0), (0.3, -0.2, 1.1), (-2.9, 1.2, -3.0), (3.1, -1.4, 3.1), (1.0, 0.5, -1.7), (-0.4, -0.9, 2.5),
    ]

    @Test(arguments: angles)
    func eulerRoundTrip(_ a: (roll: Double, pitch: Double, yaw: Double)) {
        let q = Quaternion(roll: a.roll, pitch: a.pitch, yaw: a.yaw)
        let e = q.eulerAngles
        #expect(abs(e.roll - a.roll) < 1e-9 && abs(e.pitch - a.pitch) < 1e-9 && abs(e.yaw - a.yaw) < 1e-9)
    }

    @Test(arguments: angles)
    func matrixRoundTrip(_ a: (roll: Double, pitch: Double, yaw: Double)) {
        let q = Quaternion(roll: a.roll, pitch: a.pitch, yaw: a.yaw)
        let m = RotationMatrix(q)
        #expect(m.quaternion.angle(to: q) < 1e-9)
        let v = Vector3(0.3, -0.8, 0.5)
        #expect((m * v - q.rotate(v)).norm < 1e-12)
        #expect((m.transposed * (m * v) - v).norm < 1e-12)
        // Gravity in device axes is −(m31, m32, m33).
        let g = q.inverseRotate(Vector3(0, 0, -1))
        #expect((g - Vector3(-m.m31, -m.m32, -m.m33)).norm < 1e-12)
    }

    /// The axes: pitch turns about x, roll about y, yaw about z.
    @Test func anglesAreAboutTheDocumentedAxes() {
        #expect(abs(Quaternion(axis: Vector3(1, 0, 0), angle: 0.4).pitch - 0.4) < 1e-12)
        #expect(abs(Quaternion(axis: Vector3(0, 1, 0), angle: 0.4).roll - 0.4) < 1e-12)
        #expect(abs(Quaternion(axis: Vector3(0, 0, 1), angle: 0.4).yaw - 0.4) < 1e-12)
    }

    @Test(arguments: [Double.pi / 2, -Double.pi / 2])
    func gimbalLock(_ pitch: Double) {
        let q = Quaternion(roll: 0.7, pitch: pitch, yaw: -0.4)
        let e = q.eulerAngles
        #expect(abs(e.pitch - pitch) < 1e-9)
        #expect(e.roll == 0)
        // The same rotation, with all of the vertical turn in yaw.
        #expect(Quaternion(roll: e.roll, pitch: e.pitch, yaw: e.yaw).angle(to: q) < 1e-6)
        #expect(RotationMatrix(q).quaternion.angle(to: q) < 1e-9)
    }

    @Test func yawWrapsAtPi() {
        let a = Quaternion(roll: 0.1, pitch: 0.2, yaw: .pi - 0.01)
        let b = Quaternion(roll: 0.1, pitch: 0.2, yaw: -.pi + 0.01)
        #expect(abs(a.yaw - (.pi - 0.01)) < 1e-9)
        #expect(abs(b.yaw - (-.pi + 0.01)) < 1e-9)
        #expect(abs(a.angle(to: b) - 0.02) < 1e-9)
        // 3π/2 comes back as −π/2.
        #expect(abs(Quaternion(roll: 0, pitch: 0, yaw: 1.5 * .pi).yaw + .pi / 2) < 1e-9)
    }
}
