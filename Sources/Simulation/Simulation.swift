import AgentPorts
import MotionModel

/// The simulated IMU: physically grounded scenarios with ground truth, for the running agent (when no IIO
/// hardware exists) and for tests and benchmarks.
///
/// ## Using it
/// - Agent: `SimulatedSensorSource(scenario:seed:rateHz:earthField:altitudeM:)` is a `SensorSource` with
///   one device (`simulated`, `simulated-imu`, all four sensors, ODR ladder `rateHz, rateHz/2, …, ≥ 1 Hz`)
///   paced in real time on its own thread with absolute `clock_nanosleep` deadlines, timestamped on
///   CLOCK_MONOTONIC in seconds (like IIO).
/// - Tests and benchmarks: `SimulatedIMU.sample(at:sensors:)` at any non-decreasing times, with
///   `SimulatedIMU.truth` after each call; or `SimulatedRecording` (an iterator of `(sample, truth)` at a
///   fixed rate, or `fill(_:)` into a caller's buffer) as fast as the machine goes.
///
/// ## Conventions
/// World NWU (x north, y west, z up); attitude maps device → world. Accelerometer in g with Core Motion's
/// sign (`q⁻¹ ⊗ ((0,0,−1) − a/9.80665) ⊗ q`: face up at rest reads (0, 0, −1)); gyroscope rad/s in device
/// axes; magnetometer µT in device axes (`q⁻¹ B q` + hard iron [+ soft iron] + noise); barometer kPa from
/// the ISA troposphere formula at the device's altitude, plus offset, weather drift and noise; temperature °C.
///
/// ## What is modelled
/// - Motion as exact kinematics: every scenario is a chain of rigid frames (path → heading → body
///   oscillation → joint → phone mount) written in second-order forward-mode derivatives (`Jet`), so the
///   accelerometer, gyroscope and barometer see the exact derivatives of the positions and attitudes in the
///   truth. Integrating the noise-free gyroscope reproduces the attitude; segments start and end at rest with
///   C² ramps, so chained segments (mixed-day, loops) are continuous in position, velocity and acceleration.
/// - Gaits: vertical acceleration from a half-sine stance pulse (6 harmonics) with a −0.25 g trough walking and
///   a −0.8 g trough (near free fall) running; forward surge per step, sideways sway per stride, a meandering
///   path. One step per foot strike, counted in the truth. Phone in the hand (walking, stairs: with pitch and
///   roll sway) or in a front trouser pocket (running: on the thigh, hip flexion swinging −12° … +52°).
/// - Stairs: 3 m per floor in two flights of 9 steps with a 2-step landing and a U-turn; lifts take the
///   person back (they change altitude but count no floors).
/// - Vehicles: legs between stops with smooth speed ramps and junction turns; bicycle pedalling moves the
///   pocketed phone with the thigh; car suspension heave, road texture 10–30 Hz and 25 Hz engine vibration
///   (also at stops), as sums of sinusoids with seeded phases.
/// - Sensor errors (`SensorErrorModel`, defaults from BMI160 / BMM150 / BMP280 datasheets): white noise as
///   densities scaled by the sampling rate actually used (so a rate change mid-run changes the noise like on
///   hardware), constant seeded biases, gyroscope bias random walk and barometer weather drift advanced by
///   the real time step, hard iron, optional soft iron. `SensorErrorModel.ideal` turns them all off.
/// - Determinism: everything follows from the seed (xoshiro256** streams, one per noise process, so the set
///   of sensors requested does not change another sensor's noise).
///
/// ## What is not modelled
/// - No horizontal position (velocity and distance only); no GPS.
/// - No scale-factor errors, axis misalignment, cross-axis sensitivity, temperature dependence of biases,
///   saturation, quantisation or sensor-to-sensor time skew; all sensors sample at the same instants.
/// - Vibration is deterministic sinusoids, not broadband random processes; no magnetic disturbances from
///   the car, steel structures or the lift (the Earth field is uniform everywhere).
/// - Body mechanics are kinematic patterns with published magnitudes, not a musculoskeletal model; the
///   running and cycling cases have no public raw recording to be checked against (see
///   Tests/Fixtures/data/README.md), so they are as good as these patterns.
package enum Simulation {}
