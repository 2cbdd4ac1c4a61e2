import MotionModel

/// What really happened at one instant of a simulation, for scoring estimators.
///
/// Frames: the world is North-West-Up with x at true (geographic) north, the frame of the `earthField`
/// given to the simulator (Core Motion's `xTrueNorthZVertical`); `attitude` maps device axes to it.
/// `magneticAttitude` is the same attitude in Core Motion's `xMagneticNorthZVertical` frame, x along the
/// horizontal field. Device-axis quantities are in Core Motion's units and signs.
package struct SimulationTruth: Sendable, Equatable {
    /// Simulation time, s.
    package var time: Double
    /// Which scenario is active at this instant (for `mixed-day`, the part of the day; a transition between
    /// parts reports the part it leads to).
    package var scenario: SimulationScenario
    /// True while the phone is being moved between placements (pocket, hand, table, car) in `mixed-day`.
    package var isTransition: Bool
    package var activity: SimulationActivity

    /// Device → world (NWU, x true north).
    package var attitude: Quaternion
    /// Device → NWU with x along the horizontal Earth field (magnetic north): `attitude` turned by the
    /// declination.
    package var magneticAttitude: Quaternion
    /// True angular velocity, rad/s, device axes (what a perfect gyroscope reads).
    package var rotationRate: Vector3
    /// Kinematic acceleration of the device, m/s², world axes (z up; gravity not included).
    package var acceleration: Vector3
    /// Velocity of the device, m/s, world axes.
    package var velocity: Vector3
    /// Core Motion's `gravity`: the unit gravity direction in device axes, g (face up at rest: (0, 0, −1)).
    package var gravity: Vector3
    /// Core Motion's `userAcceleration`, g, device axes: `−acceleration / 9.80665` rotated into the device
    /// (so `gravity + userAcceleration` is exactly the noise-free accelerometer reading).
    package var userAcceleration: Vector3

    /// Device altitude above sea level, m (what the barometer senses).
    package var altitude: Double
    /// ISA pressure at `altitude`, kPa, before sensor errors.
    package var pressureKPa: Double

    /// Foot strikes since the simulation began (each strike is one step).
    package var steps: Int
    /// Distance walked or run since the simulation began, m (along the path; rides and drives excluded).
    package var distance: Double
    /// Current step frequency, steps/s (0 when not on foot).
    package var cadence: Double
    /// Current speed of the person or vehicle along the path, m/s.
    package var speed: Double
    /// Floors climbed on foot (3 m each) since the simulation began; lifts do not count.
    package var floorsAscended: Int
    /// Floors descended on foot since the simulation began.
    package var floorsDescended: Int

    /// Earth field in world axes, µT (NWU).
    package var earthField: Vector3
    /// The sensor errors in effect at this instant (the reading is truth + these + white noise).
    package var gyroscopeBias: Vector3
    /// g, device axes.
    package var accelerometerBias: Vector3
    /// µT, device axes.
    package var hardIron: Vector3
    /// Slow barometer drift (weather and sensor offset), kPa.
    package var pressureOffsetKPa: Double
    /// Die temperature, °C.
    package var temperatureC: Double

    package init() {
        time = 0
        scenario = .stationary
        isTransition = false
        activity = .stationary
        attitude = .identity
        magneticAttitude = .identity
        rotationRate = .zero
        acceleration = .zero
        velocity = .zero
        gravity = Vector3(0, 0, -1)
        userAcceleration = .zero
        altitude = 0
        pressureKPa = 101.325
        steps = 0
        distance = 0
        cadence = 0
        speed = 0
        floorsAscended = 0
        floorsDescended = 0
        earthField = .zero
        gyroscopeBias = .zero
        accelerometerBias = .zero
        hardIron = .zero
        pressureOffsetKPa = 0
        temperatureC = 25
    }
}
