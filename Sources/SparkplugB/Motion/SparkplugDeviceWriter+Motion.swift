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
        // Explicit slots, not a running index in a nested function: a captured mutable local is boxed on the
        // heap, an allocation per sample.
        let q = motion.attitude
        set(0, .float(Float(q.x)), timestampMs: t)
        set(1, .float(Float(q.y)), timestampMs: t)
        set(2, .float(Float(q.z)), timestampMs: t)
        set(3, .float(Float(q.w)), timestampMs: t)
        set(4, .float(Float(q.roll)), timestampMs: t)
        set(5, .float(Float(q.pitch)), timestampMs: t)
        set(6, .float(Float(q.yaw)), timestampMs: t)
        setVector(7, motion.rotationRate, t)
        setVector(10, motion.gravity, t)
        setVector(13, motion.userAcceleration, t)
        setVector(16, motion.magneticField, t)
        set(19, .string(motion.magneticFieldAccuracy.rawValue), timestampMs: t)
        set(20, .float(Float(motion.heading)), timestampMs: t)
        set(21, .float(Float(motion.inclinationAccuracy)), timestampMs: t)
        set(22, .float(Float(motion.headingAccuracy)), timestampMs: t)
        set(23, .string(motion.referenceFrame.rawValue), timestampMs: t)
        if let relative = motion.relativeAttitude {
            let r = relative.quaternion
            set(24, .float(Float(r.x)), timestampMs: t)
            set(25, .float(Float(r.y)), timestampMs: t)
            set(26, .float(Float(r.z)), timestampMs: t)
            set(27, .float(Float(r.w)), timestampMs: t)
            set(28, .float(Float(r.roll)), timestampMs: t)
            set(29, .float(Float(r.pitch)), timestampMs: t)
            set(30, .float(Float(r.yaw)), timestampMs: t)
            set(31, .dateTime(MotionSparkplug.milliseconds(relative.referenceTime)), timestampMs: t)
        } else {
            for slot in 24...31 { set(slot, .null, timestampMs: t) }
        }
    }

    @inline(__always)
    private mutating func setVector(_ first: Int, _ v: Vector3, _ t: UInt64) {
        set(first, .float(Float(v.x)), timestampMs: t)
        set(first + 1, .float(Float(v.y)), timestampMs: t)
        set(first + 2, .float(Float(v.z)), timestampMs: t)
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
