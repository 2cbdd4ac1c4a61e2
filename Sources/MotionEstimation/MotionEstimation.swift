import MotionModel

/// Pure estimation algorithms: attitude filter, magnetometer calibration, World Magnetic Model, pedometer,
/// activity classifier, altimeter, submersion. No I/O, no clocks, no allocation per sample.
package enum MotionEstimation {}
