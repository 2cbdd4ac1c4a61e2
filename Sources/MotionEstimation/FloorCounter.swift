/// Floors climbed and descended on foot, from barometric height change while the user is stepping.
///
/// Height comes from the smoothed pressure through the standard atmosphere. A floor counts when the height
/// has moved `floorHeight` from an anchor while stepping; the anchor then moves by one floor (hysteresis:
/// noise of a few decimetres never adds a floor). While not stepping, or while height changes faster than
/// stairs allow (a lift, ≥ 1 m/s, against ≈ 0.2–0.5 m/s on stairs), the anchor follows the height, so
/// height changed by a lift or the weather never becomes floors, and a pause on a landing loses nothing.
/// The step detector confirms a walk a few steps late; `walkStarted(at:)` then restores the anchor from
/// that moment (snapshots every 0.5 s over the last 16 s), so the first steps of a flight count too.
package struct FloorCounter: Sendable {
    package struct Settings: Sendable, Equatable {
        /// Height of one floor, m (Core Motion counts about 3 m, roughly ten stairs).
        package var floorHeight: Double
        /// Time constant of the pressure smoothing, s.
        package var pressureTimeConstant: Double
        /// Time constant of the vertical-speed estimate, s.
        package var verticalSpeedTimeConstant: Double
        /// Fastest vertical speed still counted as stairs, m/s.
        package var maximumStairSpeed: Double
        /// Height change counts as stepping when the last step is at most this old, s.
        package var stepAttributionWindow: Double

        package init(
            floorHeight: Double,
            pressureTimeConstant: Double,
            verticalSpeedTimeConstant: Double,
            maximumStairSpeed: Double,
            stepAttributionWindow: Double
        ) {
            self.floorHeight = floorHeight
            self.pressureTimeConstant = pressureTimeConstant
            self.verticalSpeedTimeConstant = verticalSpeedTimeConstant
            self.maximumStairSpeed = maximumStairSpeed
            self.stepAttributionWindow = stepAttributionWindow
        }

        package static let defaults = Settings(
            floorHeight: 3.0,
            pressureTimeConstant: 1.0,
            verticalSpeedTimeConstant: 2.0,
            maximumStairSpeed: 0.8,
            stepAttributionWindow: 1.5
        )
    }

    package let settings: Settings
    package private(set) var floorsAscended = 0
    package private(set) var floorsDescended = 0
    /// Smoothed height relative to the first pressure sample, m.
    package private(set) var height = 0.0
    /// Smoothed vertical speed, m/s.
    package private(set) var verticalSpeed = 0.0
    private var referenceKPa: Double?
    private var smoothedKPa = 0.0
    private var anchor = 0.0
    private var lastTimestamp = 0.0
    // (time, anchor) every `snapshotInterval`, a fixed ring allocated once.
    private static let snapshotInterval = 0.5  // s
    private var snapshots = ContiguousArray<(time: Double, anchor: Double)>(repeating: (-.infinity, 0), count: 32)
    private var snapshotNext = 0
    private var nextSnapshotTime = -Double.infinity

    package init(settings: Settings = .defaults) {
        self.settings = settings
    }

    /// Feeds one pressure sample (kPa) and whether the user is stepping now.
    package mutating func update(timestamp: Double, pressureKPa: Double, stepping: Bool) {
        guard pressureKPa.isFinite, pressureKPa > 0 else { return }
        guard let reference = referenceKPa else {
            referenceKPa = pressureKPa
            smoothedKPa = pressureKPa
            lastTimestamp = timestamp
            return
        }
        let dt = timestamp - lastTimestamp
        guard dt > 0 else { return }
        lastTimestamp = timestamp
        smoothedKPa += dt / (settings.pressureTimeConstant + dt) * (pressureKPa - smoothedKPa)
        let newHeight = StandardAtmosphere.altitude(pressureKPa: smoothedKPa, referenceKPa: reference)
        let speed = (newHeight - height) / dt
        verticalSpeed += dt / (settings.verticalSpeedTimeConstant + dt) * (speed - verticalSpeed)
        let climbed = newHeight - height
        height = newHeight
        if timestamp >= nextSnapshotTime {
            nextSnapshotTime = timestamp + Self.snapshotInterval
            snapshots[snapshotNext] = (timestamp, anchor)
            snapshotNext = (snapshotNext + 1) % snapshots.count
        }
        guard stepping, abs(verticalSpeed) <= settings.maximumStairSpeed else {
            anchor += climbed
            return
        }
        countFloors()
    }

    /// The step detector confirmed a walk whose first step was at `time`: height gained since then counts.
    package mutating func walkStarted(at time: Double) {
        var best: (time: Double, anchor: Double)?
        for s in snapshots where s.time <= time && s.time > (best?.time ?? -.infinity) { best = s }
        guard let b = best else { return }
        anchor = b.anchor
        countFloors()
    }

    private mutating func countFloors() {
        while height - anchor >= settings.floorHeight {
            floorsAscended += 1
            anchor += settings.floorHeight
        }
        while anchor - height >= settings.floorHeight {
            floorsDescended += 1
            anchor -= settings.floorHeight
        }
    }
}
