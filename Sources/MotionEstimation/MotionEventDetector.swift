import MotionModel

/// The motion events of one device — falls with their resolution, impacts, free falls, tilts — from its
/// accelerometer (and gyroscope when it has one), one sample per `update`, each kind on or off in the settings.
/// Pure: no I/O, no clock (time is the samples'), no allocation after `init`. Its output is `MotionEvent`s, the
/// values a stream publishes.
public struct MotionEventDetector: Sendable {
    public struct Settings: Sendable, Equatable {
        public var fallEnabled: Bool
        public var fall: FallDetector.Settings
        public var impactEnabled: Bool
        public var impact: ImpactDetector.Settings
        public var freeFallEnabled: Bool
        public var freeFall: FreeFallDetector.Settings
        public var tiltEnabled: Bool
        public var tilt: TiltDetector.Settings

        public init(
            fallEnabled: Bool = true,
            fall: FallDetector.Settings = .defaults,
            impactEnabled: Bool = true,
            impact: ImpactDetector.Settings = .defaults,
            freeFallEnabled: Bool = true,
            freeFall: FreeFallDetector.Settings = .defaults,
            tiltEnabled: Bool = false,
            tilt: TiltDetector.Settings = .defaults
        ) {
            self.fallEnabled = fallEnabled
            self.fall = fall
            self.impactEnabled = impactEnabled
            self.impact = impact
            self.freeFallEnabled = freeFallEnabled
            self.freeFall = freeFall
            self.tiltEnabled = tiltEnabled
            self.tilt = tilt
        }

        /// Falls, impacts and free falls on; tilt off: a body-worn device tilts whenever its wearer sits or bends,
        /// so tilt is for devices with a resting attitude (a crate, a machine), switched on with their reference.
        public static let defaults = Settings()
    }

    public let settings: Settings
    public private(set) var fall: FallDetector
    public private(set) var impact: ImpactDetector
    public private(set) var freeFall: FreeFallDetector
    public private(set) var tilt: TiltDetector

    public init(settings: Settings = .defaults) {
        self.settings = settings
        fall = FallDetector(settings: settings.fall)
        impact = ImpactDetector(settings: settings.impact)
        freeFall = FreeFallDetector(settings: settings.freeFall)
        tilt = TiltDetector(settings: settings.tilt)
    }

    /// Feeds one sample: acceleration in g with Core Motion's sign (only magnitudes and angles are used, so the
    /// other sign works too), rotation rate in rad/s or nil, time in s.
    public mutating func update(timestamp t: Double, acceleration a: Vector3, rotationRate: Vector3?) -> Events {
        var out = Events()
        guard t.isFinite, a.isFinite else { return out }
        let m = a.norm
        if settings.freeFallEnabled { out.freeFall = freeFall.update(timestamp: t, magnitude: m) }
        if settings.impactEnabled { out.impact = impact.update(timestamp: t, magnitude: m) }
        if settings.fallEnabled {
            let u = fall.update(timestamp: t, acceleration: a, rotationRate: rotationRate)
            out.fall = u.fall
            out.fallResolution = u.resolution
        }
        if settings.tiltEnabled { out.tilt = tilt.update(timestamp: t, acceleration: a, rotationRate: rotationRate) }
        return out
    }

    /// Feeds one sample (nothing happens without an acceleration).
    public mutating func update(_ sample: IMUSample) -> Events {
        guard let a = sample.acceleration else { return Events() }
        return update(timestamp: sample.timestamp, acceleration: a, rotationRate: sample.rotationRate)
    }

    /// Resolves the fall awaiting a resolution (an operator's `confirmed` or `dismissed`) at `time`, s on the sample
    /// clock; nil when there is none.
    public mutating func resolveFall(
        _ resolution: FallDetectionEvent.Resolution,
        at time: Double
    ) -> FallDetectionEvent? {
        fall.resolve(resolution, at: time)
    }

    /// Makes `direction` (gravity in device axes) the tilt reference from now on.
    public mutating func setTiltReference(_ direction: Vector3) {
        tilt.setReference(direction)
    }
}
