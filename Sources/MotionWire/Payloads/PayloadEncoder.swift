import MotionModel

/// Writes every stream payload as JSON (docs/payloads.md) into a reusable `JSONBuffer`: no allocation, numbers
/// at the precision each field documents.
public enum PayloadEncoder {
    /// The whole message: envelope, payload, closing brace.
    public static func encode(_ envelope: MessageEnvelope, _ payload: StreamPayload, into b: inout JSONBuffer) {
        envelope.open(into: &b)
        switch payload {
        case .acceleration(let v):
            b.raw(",\"acceleration\":")
            b.vector(v, decimals: 6)  // µg resolution: below any MEMS accelerometer's noise floor
        case .rotationRate(let v):
            b.raw(",\"rotationRate\":")
            b.vector(v, decimals: 6)  // µrad/s
        case .magneticField(let v):
            b.raw(",\"magneticField\":")
            b.vector(v, decimals: 3)  // nT
        case .deviceMotion(let m): deviceMotion(m, into: &b)
        case .pedometer(let p): pedometer(p, into: &b)
        case .pedometerEvent(let e):
            b.raw(",\"type\":")
            b.raw(e.type == .pause ? "\"pause\"" : "\"resume\"")
            b.raw(",\"date\":")
            b.number(e.date, decimals: 3)
        case .activity(let a): activity(a, into: &b)
        case .altitude(let a):
            b.raw(",\"relativeAltitude\":")
            b.number(a.relativeAltitude, decimals: 3)
            b.raw(",\"pressure\":")
            b.number(a.pressureKPa, decimals: 5)
        case .absoluteAltitude(let a):
            b.raw(",\"altitude\":")
            b.number(a.altitude, decimals: 2)
            b.raw(",\"accuracy\":")
            b.number(a.accuracy, decimals: 2)
            b.raw(",\"precision\":")
            b.number(a.precision, decimals: 3)
        case .submersion(let s):
            b.raw(",\"state\":")
            b.string(s.state.rawValue)
            b.raw(",\"depth\":")
            b.number(s.depth, decimals: 3)
            b.raw(",\"pressure\":")
            b.number(s.pressureKPa, decimals: 4)
            b.raw(",\"surfacePressure\":")
            b.number(s.surfacePressureKPa, decimals: 4)
            b.raw(",\"temperature\":")
            optional(s.temperatureC, decimals: 2, &b)
        }
        b.byte(UInt8(ascii: "}"))
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

    private static func deviceMotion(_ m: DeviceMotion, into b: inout JSONBuffer) {
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

    private static func pedometer(_ p: PedometerData, into b: inout JSONBuffer) {
        b.raw(",\"startDate\":")
        b.number(p.startDate, decimals: 3)
        b.raw(",\"endDate\":")
        b.number(p.endDate, decimals: 3)
        b.raw(",\"numberOfSteps\":")
        b.integer(p.numberOfSteps)
        b.raw(",\"distance\":")
        optional(p.distance, decimals: 2, &b)
        b.raw(",\"floorsAscended\":")
        optional(p.floorsAscended, &b)
        b.raw(",\"floorsDescended\":")
        optional(p.floorsDescended, &b)
        b.raw(",\"currentPace\":")
        optional(p.currentPace, decimals: 4, &b)
        b.raw(",\"currentCadence\":")
        optional(p.currentCadence, decimals: 4, &b)
        b.raw(",\"averageActivePace\":")
        optional(p.averageActivePace, decimals: 4, &b)
    }

    private static func activity(_ a: MotionActivity, into b: inout JSONBuffer) {
        b.raw(",\"startDate\":")
        b.number(a.startDate, decimals: 3)
        b.raw(",\"stationary\":")
        b.bool(a.stationary)
        b.raw(",\"walking\":")
        b.bool(a.walking)
        b.raw(",\"running\":")
        b.bool(a.running)
        b.raw(",\"cycling\":")
        b.bool(a.cycling)
        b.raw(",\"automotive\":")
        b.bool(a.automotive)
        b.raw(",\"unknown\":")
        b.bool(a.unknown)
        b.raw(",\"confidence\":")
        switch a.confidence {
        case .low: b.raw("\"low\"")
        case .medium: b.raw("\"medium\"")
        case .high: b.raw("\"high\"")
        }
    }

    private static func optional(_ v: Double?, decimals: Int, _ b: inout JSONBuffer) {
        if let v { b.number(v, decimals: decimals) } else { b.raw("null") }
    }

    private static func optional(_ v: Int?, _ b: inout JSONBuffer) {
        if let v { b.integer(v) } else { b.raw("null") }
    }
}
