import MotionModel

/// The motion events of one device — falls with their resolution, impacts, free falls, tilts — from its
/// accelerometer (and gyroscope when it has one), one sample per `update`, each kind on or off in the settings.
/// Pure: no I/O, no clock (time is the samples'), no allocation after `init`. Its output is `MotionEvent`s, the
/// values a stream publishes.
package struct MotionEventDetector: Sendable {
    package struct Settings: Sendable, Equatable {
        package var fallEnabled: Bool
        package var fall: FallDetector.Settings
        package var impactEnabled: Bool
        package var impact: ImpactDetector.Settings
        package var freeFallEnabled: Bool
        package var freeFall: FreeFallDetector.Settings
        package var tiltEnabled: Bool
        package var tilt: TiltDetector.Settings

        package init(
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
        package static let defaults = Settings()
    }

    package private(set) var settings: Settings
    package private(set) var fall: FallDetector
    package private(set) var impact: ImpactDetector
    package private(set) var freeFall: FreeFallDetector
    package private(set) var tilt: TiltDetector

    package init(settings: Settings = .defaults) {
        self.settings = settings
        fall = FallDetector(settings: settings.fall)
        impact = ImpactDetector(settings: settings.impact)
        freeFall = FreeFallDetector(settings: settings.freeFall)
        tilt = TiltDetector(settings: settings.tilt)
    }

    /// Feeds one sample: acceleration in g with Core Motion's sign (only magnitudes and angles are used, so the
    /// other sign works too), rotation rate in rad/s or nil, time in s.
    package mutating func update(timestamp t: Double, acceleration a: Vector3, rotationRate: Vector3?) -> Events {
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
    package mutating func update(_ sample: IMUSample) -> Events {
        guard let a = sample.acceleration else { return Events() }
        return update(timestamp: sample.timestamp, acceleration: a, rotationRate: sample.rotationRate)
    }

    /// Resolves the fall awaiting a resolution (an operator's `confirmed` or `dismissed`) at `time`, s on the sample
    /// clock; nil when there is none.
    package mutating func resolveFall(
        _ resolution: FallDetectionEvent.Resolution,
        at time: Double
    ) -> FallDetectionEvent? {
        fall.resolve(resolution, at: time)
    }

    /// Takes over a fall an earlier run reported and did not resolve (`FallDetector.adopt`); nothing when falls are
    /// off.
    package mutating func adoptUnresolvedFall(_ event: FallDetectionEvent) {
        guard settings.fallEnabled else { return }
        fall.adopt(event)
    }

    /// New settings from the next sample on (a desired document or a command changed them), keeping what each
    /// detector knows: a fall awaiting its resolution still gets it — under the new response window, counted from
    /// its detection — and the tilt keeps its reference. A kind switched off forgets its state (a pending fall gets no
    /// follow-up: its resolution was switched off with it); switched on again, it starts afresh.
    package mutating func reconfigure(_ new: Settings) {
        if new.fallEnabled != settings.fallEnabled { fall = FallDetector(settings: new.fall) }
        fall.settings = new.fall
        if new.impactEnabled != settings.impactEnabled { impact = ImpactDetector(settings: new.impact) }
        impact.settings = new.impact
        if new.freeFallEnabled != settings.freeFallEnabled { freeFall = FreeFallDetector(settings: new.freeFall) }
        freeFall.settings = new.freeFall
        if new.tiltEnabled != settings.tiltEnabled || new.tilt.referenceGravity != settings.tilt.referenceGravity {
            tilt = TiltDetector(settings: new.tilt)
        } else {
            tilt.setCone(
                halfAngleDegrees: new.tilt.coneHalfAngleDegrees,
                hysteresisDegrees: new.tilt.hysteresisDegrees
            )
        }
        settings = new
    }

    /// Makes `direction` (gravity in device axes) the tilt reference from now on.
    package mutating func setTiltReference(_ direction: Vector3) {
        tilt.setReference(direction)
    }
}
