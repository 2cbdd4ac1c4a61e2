import Foundation
import MotionModel
import Testing

/// Core Motion's `attitude.multiply(byInverseOf: reference)` on rotations whose relative rotation is known.
@Suite struct RelativeAttitudeTests {
    private let degree = Double.pi / 180

    /// The same rotation (q and −q are one rotation).
    private func same(_ a: Quaternion, _ b: Quaternion, within tolerance: Double = 1e-12) -> Bool {
        // Component-wise rather than by `angle(to:)`: acos near 1 resolves only about 3e-8 rad.
        let d = max(abs(a.w - b.w), abs(a.x - b.x), abs(a.y - b.y), abs(a.z - b.z))
        let s = max(abs(a.w + b.w), abs(a.x + b.x), abs(a.y + b.y), abs(a.z + b.z))
        return min(d, s) < tolerance
    }

    /// Attitudes spread over the sphere of rotations (a fixed sequence, not random: the test is repeatable).
    private var poses: [Quaternion] {
        (0..<24).map { i in
            let t = Double(i)
            return Quaternion(roll: 2.9 * sin(0.7 * t + 0.3), pitch: 1.4 * sin(1.3 * t + 1.1), yaw: 3.0 * cos(0.9 * t))
        }
    }

    @Test func theDevicesBodyFrameChangeSinceTheReferenceIsRecovered() {
        // A device at `reference` that then turns by `change` about its own axes is at reference ⊗ change.
        for (i, reference) in poses.enumerated() {
            let change = Quaternion(axis: Vector3(0.3, -0.8, 0.5), angle: 0.1 + 0.2 * Double(i))
            let current = reference * change
            let relative = ReferenceAttitude(quaternion: reference, time: 100).relative(current)
            #expect(same(relative.quaternion, change), "pose \(i)")
            #expect(relative.referenceTime == 100)
        }
    }

    @Test func theOrderIsTheInverseOfTheReferenceOnTheLeftNotTheWorldFrameChange() {
        // Apple: "multiplies the inverse of the specified CMAttitude object by the attitude represented by the
        // receiving object". The other order (current ⊗ reference⁻¹) is the change seen from the world frame;
        // for a tilted reference the two differ, and only the documented one maps current device axes into the
        // device axes at the reference.
        let reference = Quaternion(roll: 0.4, pitch: 0.9, yaw: -1.2)
        let current = Quaternion(roll: -0.3, pitch: 0.2, yaw: 0.7)
        let relative = current.multiplied(byInverseOf: reference)
        let worldChange = current * reference.conjugate
        #expect(!same(relative, worldChange, within: 0.1), "the test must tell the two orders apart")
        for v in [Vector3(1, 0, 0), Vector3(0, 1, 0), Vector3(0.2, -0.4, 0.9)] {
            let expected = reference.inverseRotate(current.rotate(v))
            #expect((relative.rotate(v) - expected).norm < 1e-12)
        }
    }

    @Test func inTheReferencePoseEveryAngleIsZero() {
        for reference in poses {
            let relative = reference.multiplied(byInverseOf: reference)
            #expect(same(relative, .identity))
            #expect(abs(relative.roll) < 1e-9 && abs(relative.pitch) < 1e-9 && abs(relative.yaw) < 1e-9)
        }
    }

    @Test func aLevelDeviceTurningAboutTheVerticalReportsTheTurnAsYaw() {
        let reference = Quaternion(roll: 0, pitch: 0, yaw: 30 * degree)
        let current = Quaternion(roll: 0, pitch: 0, yaw: 75 * degree)
        let relative = current.multiplied(byInverseOf: reference)
        #expect(abs(relative.yaw - 45 * degree) < 1e-9)
        #expect(abs(relative.roll) < 1e-9 && abs(relative.pitch) < 1e-9)
        // Across ±180°: from yaw 170° to yaw −170° is a turn of +20°.
        let across = Quaternion.aboutZ(-170 * degree).multiplied(byInverseOf: .aboutZ(170 * degree))
        #expect(abs(across.yaw - 20 * degree) < 1e-9)
    }

    @Test func aTurnAboutTheVerticalFromAnUprightReferenceIsAboutTheReferencesOwnAxis() {
        // Reference: the device stood up (pitch 90°: its top edge, +y, points up). Turning it 40° about the
        // world's vertical turns it about its own y axis, which Core Motion calls roll — the relative attitude
        // is expressed in the reference pose's axes, so it reports roll 40° and yaw 0, not yaw 40°.
        let reference = Quaternion(roll: 0, pitch: 90 * degree, yaw: 0)
        let current = Quaternion.aboutZ(40 * degree) * reference
        let relative = current.multiplied(byInverseOf: reference)
        #expect(same(relative, Quaternion(axis: Vector3(0, 1, 0), angle: 40 * degree)))
        #expect(abs(relative.roll - 40 * degree) < 1e-9)
        #expect(abs(relative.pitch) < 1e-9 && abs(relative.yaw) < 1e-9)
        // The world-frame change would have said yaw 40°: the order matters here.
        #expect(abs((current * reference.conjugate).yaw - 40 * degree) < 1e-9)
    }

    @Test func theRelativeAttitudeDoesNotDependOnTheFramesHeading() {
        // xArbitraryZVertical and xMagneticNorthZVertical differ by a turn about the vertical (the arbitrary
        // frame's yaw zero): reference and current both carry it, and it cancels.
        for offset in [-170.0, -35, 0, 62, 180] {
            let frame = Quaternion.aboutZ(offset * degree)
            for (i, reference) in poses.enumerated() {
                let current = poses[(i + 7) % poses.count]
                let inArbitrary = current.multiplied(byInverseOf: reference)
                let inNorth = (frame * current).multiplied(byInverseOf: frame * reference)
                #expect(same(inArbitrary, inNorth), "offset \(offset)°, pose \(i)")
            }
        }
    }

    @Test func aReferenceIsKeptNormalisedSoAScaledQuaternionMeansTheSameRotation() {
        let q = Quaternion(roll: 0.3, pitch: -0.2, yaw: 1.0)
        let scaled = Quaternion(w: 3 * q.w, x: 3 * q.x, y: 3 * q.y, z: 3 * q.z)
        let reference = ReferenceAttitude(quaternion: scaled, time: 5)
        #expect(abs(reference.quaternion.norm - 1) < 1e-15)
        #expect(same(reference.relative(q).quaternion, .identity))
    }
}
