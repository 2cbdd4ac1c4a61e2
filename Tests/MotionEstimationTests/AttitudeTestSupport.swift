import Foundation
import MotionModel

/// A synthetic IMU for the attitude tests: integrates a known body rate into the true attitude
/// (device → North-West-Up) and produces Core Motion-convention samples from it. Deterministic noise.
struct AttitudeSynthesizer {
    var attitude: Quaternion
    var time = 0.0
    let interval: Double
    /// Earth field in NWU, µT (north and down, about Berlin's).
    var earthField = Vector3(18, 0, -45)
    var gyroscopeBias = Vector3.zero
    var noise = 0.0
    private var seed: UInt64 = 0x9E37_79B9_7F4A_7C15

    init(attitude: Quaternion = .identity, rateHz: Double = 100) {
        self.attitude = attitude
        self.interval = 1 / rateHz
    }

    mutating func uniform() -> Double {
        seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        return Double(seed >> 11) / Double(1 << 53) * 2 - 1
    }

    mutating func jitter() -> Vector3 { Vector3(uniform(), uniform(), uniform()) * noise }

    /// Advances by one sample at body rate `rate` (rad/s, device axes) and returns the sample taken then.
    /// `field` (µT, NWU) replaces the earth field, e.g. with a magnet nearby.
    mutating func step(rate: Vector3, userAcceleration: Vector3 = .zero, field: Vector3? = nil) -> IMUSample {
        let n = rate.norm
        if n > 0 { attitude = (attitude * Quaternion(axis: rate, angle: n * interval)).normalized }
        time += interval
        let gravity = attitude.inverseRotate(Vector3(0, 0, -1))
        let mag = attitude.inverseRotate(field ?? earthField)
        return IMUSample(
            timestamp: time,
            acceleration: gravity + userAcceleration + jitter() * 0.01,
            rotationRate: rate + gyroscopeBias + jitter() * 0.01,
            magneticField: mag + jitter()
        )
    }
}

func degrees(_ radians: Double) -> Double { radians * 180 / .pi }
