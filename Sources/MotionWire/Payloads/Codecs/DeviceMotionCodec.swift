import Foundation
import MotionModel

/// `{root}/device-motion`: Core Motion's `CMDeviceMotion` — attitude in every form `CMAttitude` offers, gravity,
/// user acceleration, bias-free rotation rate, the calibrated field, heading and its accuracies, and the relative
/// attitude once a reference is set.
enum DeviceMotionCodec: PayloadCodec {
    static func write(_ m: DeviceMotion, into b: inout JSONBuffer) {
        b.raw(",\"attitude\":")
        openAttitude(m.attitude, into: &b)
        b.raw("},\"rotationRate\":")
        b.vector(m.rotationRate, decimals: 6)
        b.raw(",\"gravity\":")
        b.vector(m.gravity, decimals: 6)
        b.raw(",\"userAcceleration\":")
        b.vector(m.userAcceleration, decimals: 6)
        b.raw(",\"magneticField\":{\"field\":")
        b.vector(m.magneticField, decimals: 3)
        b.raw(",\"accuracy\":")
        switch m.magneticFieldAccuracy {
        case .uncalibrated: b.raw("\"uncalibrated\"")
        case .low: b.raw("\"low\"")
        case .medium: b.raw("\"medium\"")
        case .high: b.raw("\"high\"")
        }
        b.raw("},\"heading\":")
        b.number(m.heading, decimals: 3)
        b.raw(",\"inclinationAccuracy\":")
        b.number(m.inclinationAccuracy, decimals: 3)
        b.raw(",\"headingAccuracy\":")
        b.number(m.headingAccuracy, decimals: 3)
        b.raw(",\"referenceFrame\":")
        switch m.referenceFrame {
        case .xArbitraryZVertical: b.raw("\"xArbitraryZVertical\"")
        case .xArbitraryCorrectedZVertical: b.raw("\"xArbitraryCorrectedZVertical\"")
        case .xMagneticNorthZVertical: b.raw("\"xMagneticNorthZVertical\"")
        case .xTrueNorthZVertical: b.raw("\"xTrueNorthZVertical\"")
        }
        if let relative = m.relativeAttitude {
            b.raw(",\"relativeAttitude\":")
            openAttitude(relative.quaternion, into: &b)
            b.raw(",\"referenceTime\":")
            b.number(relative.referenceTime, decimals: 3)
            b.byte(UInt8(ascii: "}"))
        }
    }

    /// `{"quaternion":…,"rotationMatrix":…,"roll":…,"pitch":…,"yaw":…` without the closing brace: every form
    /// Core Motion's `CMAttitude` offers, for the absolute and the relative attitude alike (the relative one
    /// adds its reference's time before closing).
    private static func openAttitude(_ q: Quaternion, into b: inout JSONBuffer) {
        let r = RotationMatrix(q)
        b.raw("{\"quaternion\":{\"x\":")
        b.number(q.x, decimals: 7)
        b.raw(",\"y\":")
        b.number(q.y, decimals: 7)
        b.raw(",\"z\":")
        b.number(q.z, decimals: 7)
        b.raw(",\"w\":")
        b.number(q.w, decimals: 7)
        b.raw("},\"rotationMatrix\":{\"m11\":")
        b.number(r.m11, decimals: 7)
        b.raw(",\"m12\":")
        b.number(r.m12, decimals: 7)
        b.raw(",\"m13\":")
        b.number(r.m13, decimals: 7)
        b.raw(",\"m21\":")
        b.number(r.m21, decimals: 7)
        b.raw(",\"m22\":")
        b.number(r.m22, decimals: 7)
        b.raw(",\"m23\":")
        b.number(r.m23, decimals: 7)
        b.raw(",\"m31\":")
        b.number(r.m31, decimals: 7)
        b.raw(",\"m32\":")
        b.number(r.m32, decimals: 7)
        b.raw(",\"m33\":")
        b.number(r.m33, decimals: 7)
        b.raw("},\"roll\":")
        b.number(q.roll, decimals: 6)
        b.raw(",\"pitch\":")
        b.number(q.pitch, decimals: 6)
        b.raw(",\"yaw\":")
        b.number(q.yaw, decimals: 6)
    }

    static func read(_ o: PayloadFields, timestamp: Double) throws(WireDecodingError) -> DeviceMotion {
        let attitude = try o.object("attitude")
        let q = try attitude.object("quaternion")
        let field = try o.object("magneticField")
        var motion = DeviceMotion(
            timestamp: timestamp,
            attitude: Quaternion(
                w: try q.number("w"),
                x: try q.number("x"),
                y: try q.number("y"),
                z: try q.number("z")
            ),
            rotationRate: try o.vector("rotationRate"),
            gravity: try o.vector("gravity"),
            userAcceleration: try o.vector("userAcceleration"),
            magneticField: try field.vector("field"),
            magneticFieldAccuracy: try field.choice("accuracy"),
            heading: try o.number("heading"),
            referenceFrame: try o.choice("referenceFrame"),
            inclinationAccuracy: try o.numberIfPresent("inclinationAccuracy") ?? -1,
            headingAccuracy: try o.numberIfPresent("headingAccuracy") ?? -1
        )
        if let relative = try o.optionalObject("relativeAttitude") {
            let r = try relative.object("quaternion")
            motion.relativeAttitude = RelativeAttitude(
                quaternion: Quaternion(
                    w: try r.number("w"),
                    x: try r.number("x"),
                    y: try r.number("y"),
                    z: try r.number("z")
                ),
                referenceTime: try relative.number("referenceTime")
            )
        }
        return motion
    }

    static func summary(_ m: DeviceMotion) -> String {
        let degrees = 180 / Double.pi
        var text = String(
            format: "roll=%+6.1f° pitch=%+6.1f° yaw=%+6.1f°",
            m.roll * degrees,
            m.pitch * degrees,
            m.yaw * degrees
        )
        if m.heading >= 0 { text += String(format: " heading=%.1f°", m.heading) }
        text += String(format: " |user|=%.3f g", m.userAcceleration.norm)
        return text
    }
}
