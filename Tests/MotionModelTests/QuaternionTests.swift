import MotionModel
import Testing

@Suite struct QuaternionTests {
    @Test func rotationAboutZMapsXToY() {
        let q = Quaternion(axis: Vector3(0, 0, 1), angle: .pi / 2)
        let v = q.rotate(Vector3(1, 0, 0))
        #expect(abs(v.x) < 1e-12 && abs(v.y - 1) < 1e-12 && abs(v.z) < 1e-12)
        let back = q.inverseRotate(v)
        #expect(abs(back.x - 1) < 1e-12)
    }

    @Test func productComposesRotations() {
        let a = Quaternion(axis: Vector3(1, 0, 0), angle: 0.3)
        let b = Quaternion(axis: Vector3(0, 1, 0), angle: -0.7)
        let v = Vector3(0.2, -0.5, 0.9)
        let composed = (a * b).rotate(v)
        let stepwise = a.rotate(b.rotate(v))
        #expect((composed - stepwise).norm < 1e-12)
    }
}
