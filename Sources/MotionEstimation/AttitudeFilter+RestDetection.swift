import MotionModel

/// Rest detection (vqf.cpp `updateGyr` / `updateAcc`, paper section 3.4): the device is at rest when,
/// for `restMinimumTime`, gyroscope and specific force stay within a threshold of their low-passed values
/// and the low-passed rate is small enough to be a bias.
extension AttitudeFilter {
    @inline(__always)
    mutating func detectRest(gyroscope gyr: Vector3) {
        let lp = restGyroscopeLowPass.step(gyr, coefficients.restGyroscope)
        restSquaredDeviationGyroscope = (gyr - lp).squaredNorm
        let biasClip = parameters.biasClip * .pi / 180
        let threshold = parameters.restThresholdGyroscope * .pi / 180
        if restSquaredDeviationGyroscope >= threshold * threshold
            || abs(lp.x) > biasClip || abs(lp.y) > biasClip || abs(lp.z) > biasClip
        {
            restT = 0
            restDetected = false
        }
    }

    @inline(__always)
    mutating func detectRest(specificForce acc: Vector3, interval: Double) {
        let lp = restAccelerometerLowPass.step(acc, coefficients.restAccelerometer)
        restSquaredDeviationAccelerometer = (acc - lp).squaredNorm
        if restSquaredDeviationAccelerometer >= square(parameters.restThresholdAccelerometer) {
            restT = 0
            restDetected = false
        } else {
            restT += interval
            if restT >= parameters.restMinimumTime {
                restDetected = true
            }
        }
    }

    /// How far the last samples were from rest, relative to the thresholds (< 1 means within them):
    /// (gyroscope, accelerometer), vqf.cpp `getRelativeRestDeviations`.
    package var relativeRestDeviations: (gyroscope: Double, accelerometer: Double) {
        (
            restSquaredDeviationGyroscope.squareRoot() / (parameters.restThresholdGyroscope * .pi / 180),
            restSquaredDeviationAccelerometer.squareRoot() / parameters.restThresholdAccelerometer
        )
    }
}
