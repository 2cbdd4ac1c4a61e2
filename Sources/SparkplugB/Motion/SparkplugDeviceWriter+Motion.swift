import MotionModel

/// MotionModel's values into the slots `MotionSparkplug` declares for each stream, in the same order. Numbers
/// and the enums' literal names only: nothing here allocates.
extension SparkplugDeviceWriter {
    /// The accelerometer, gyroscope or magnetometer sample: metrics 0–2.
    public mutating func record(vector v: Vector3, timeMs: UInt64) {
        set(0, .float(Float(v.x)), timestampMs: timeMs)
        set(1, .float(Float(v.y)), timestampMs: timeMs)
        set(2, .float(Float(v.z)), timestampMs: timeMs)
    }

    public mutating func record(_ motion: DeviceMotion, timeMs t: UInt64) {
        var i = 0
        func put(_ value: SparkplugMetricValue) {
            set(i, value, timestampMs: t)
            i += 1
        }
        let q = motion.attitude
        put(.float(Float(q.x)))
        put(.float(Float(q.y)))
        put(.float(Float(q.z)))
        put(.float(Float(q.w)))
        put(.float(Float(q.roll)))
        put(.float(Float(q.pitch)))
        put(.float(Float(q.yaw)))
        // One vector after the other, without an array literal (which would allocate per sample).
        func vector(_ v: Vector3) {
            put(.float(Float(v.x)))
            put(.float(Float(v.y)))
            put(.float(Float(v.z)))
        }
        vector(motion.rotationRate)
        vector(motion.gravity)
        vector(motion.userAcceleration)
        vector(motion.magneticField)
        put(.string(motion.magneticFieldAccuracy.rawValue))
        put(.float(Float(motion.heading)))
        put(.float(Float(motion.inclinationAccuracy)))
        put(.float(Float(motion.headingAccuracy)))
        put(.string(motion.referenceFrame.rawValue))
        if let relative = motion.relativeAttitude {
            let r = relative.quaternion
            put(.float(Float(r.x)))
            put(.float(Float(r.y)))
            put(.float(Float(r.z)))
            put(.float(Float(r.w)))
            put(.float(Float(r.roll)))
            put(.float(Float(r.pitch)))
            put(.float(Float(r.yaw)))
            put(.dateTime(MotionSparkplug.milliseconds(relative.referenceTime)))
        } else {
            for _ in 0..<8 { put(.null) }
        }
    }

    public mutating func record(_ data: PedometerData, timeMs t: UInt64) {
        set(0, .int64(Int64(data.numberOfSteps)), timestampMs: t)
        set(1, data.distance.map(SparkplugMetricValue.double) ?? .null, timestampMs: t)
        set(2, data.floorsAscended.map { .int64(Int64($0)) } ?? .null, timestampMs: t)
        set(3, data.floorsDescended.map { .int64(Int64($0)) } ?? .null, timestampMs: t)
        set(4, data.currentPace.map(SparkplugMetricValue.double) ?? .null, timestampMs: t)
        set(5, data.currentCadence.map(SparkplugMetricValue.double) ?? .null, timestampMs: t)
        set(6, data.averageActivePace.map(SparkplugMetricValue.double) ?? .null, timestampMs: t)
        set(7, .dateTime(MotionSparkplug.milliseconds(data.startDate)), timestampMs: t)
        set(8, .dateTime(MotionSparkplug.milliseconds(data.endDate)), timestampMs: t)
    }

    public mutating func record(_ event: PedometerEvent, timeMs t: UInt64) {
        set(9, .string(event.type.rawValue), timestampMs: t)
        set(10, .dateTime(MotionSparkplug.milliseconds(event.date)), timestampMs: t)
    }

    public mutating func record(_ activity: MotionActivity, timeMs t: UInt64) {
        set(0, .boolean(activity.stationary), timestampMs: t)
        set(1, .boolean(activity.walking), timestampMs: t)
        set(2, .boolean(activity.running), timestampMs: t)
        set(3, .boolean(activity.automotive), timestampMs: t)
        set(4, .boolean(activity.cycling), timestampMs: t)
        set(5, .boolean(activity.unknown), timestampMs: t)
        set(6, .string(activity.confidence.rawValue), timestampMs: t)
        set(7, .dateTime(MotionSparkplug.milliseconds(activity.startDate)), timestampMs: t)
    }

    public mutating func record(_ altitude: AltitudeData, timeMs t: UInt64) {
        set(0, .double(altitude.relativeAltitude), timestampMs: t)
        set(1, .double(altitude.pressureKPa), timestampMs: t)
    }

    public mutating func record(_ absolute: AbsoluteAltitudeData, timeMs t: UInt64) {
        set(2, .double(absolute.altitude), timestampMs: t)
        set(3, .double(absolute.accuracy), timestampMs: t)
        set(4, .double(absolute.precision), timestampMs: t)
    }

    public mutating func record(_ submersion: SubmersionData, timeMs t: UInt64) {
        set(0, .string(submersion.state.rawValue), timestampMs: t)
        set(1, .double(submersion.depth), timestampMs: t)
        set(2, .double(submersion.pressureKPa), timestampMs: t)
        set(3, .double(submersion.surfacePressureKPa), timestampMs: t)
        set(4, submersion.temperatureC.map(SparkplugMetricValue.double) ?? .null, timestampMs: t)
    }

    /// The stream's settings (`MotionSparkplug.Config`), after its `dataCount` data metrics.
    public mutating func record(
        enabled: Bool,
        rateHz: Double,
        effectiveRateHz: Double,
        dataCount: Int,
        timeMs t: UInt64
    ) {
        set(dataCount + MotionSparkplug.Config.enabled.rawValue, .boolean(enabled), timestampMs: t)
        set(dataCount + MotionSparkplug.Config.rateHz.rawValue, .double(rateHz), timestampMs: t)
        set(dataCount + MotionSparkplug.Config.effectiveRateHz.rawValue, .double(effectiveRateHz), timestampMs: t)
    }
}
