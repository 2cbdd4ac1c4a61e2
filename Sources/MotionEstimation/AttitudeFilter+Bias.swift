import MotionModel

/// Gyroscope bias estimation (vqf.cpp `updateAcc`, paper section 3.3): one Kalman filter on the bias
/// whose measurement is, at rest, the low-passed gyroscope and, in motion, the rate the inclination
/// correction implies (only the two horizontal components are observable; the vertical one gets a
/// measurement variance larger by 1 / `biasVerticalForgettingFactor`).
extension AttitudeFilter {
    @inline(__always)
    mutating func estimateBias(accEarth: Vector3) {
        let biasClip = parameters.biasClip * .pi / 180
        let q = quaternion6D
        // The rotation matrix of q, written out as in vqf.cpp (q is unit up to rounding; no renormalising).
        let (w, x, y, z) = (q.w, q.x, q.y, q.z)
        var r = Matrix3x3(
            r0: Vector3(1 - 2 * y * y - 2 * z * z, 2 * (y * x - w * z), 2 * (w * y + z * x)),
            r1: Vector3(2 * (w * z + y * x), 1 - 2 * x * x - 2 * z * z, 2 * (y * z - x * w)),
            r2: Vector3(2 * (z * x - w * y), 2 * (w * x + z * y), 1 - 2 * x * x - 2 * y * y)
        )
        // R·b (x and y only), then low-pass R and R·b like the accelerometer.
        var biasLp = Vector3(r.r0.dot(bias), r.r1.dot(bias), 0)
        r.r0 = motionBiasR0.step(r.r0, coefficients.acc)
        r.r1 = motionBiasR1.step(r.r1, coefficients.acc)
        r.r2 = motionBiasR2.step(r.r2, coefficients.acc)
        biasLp = motionBiasLowPass.step(biasLp, coefficients.acc)

        var e = Vector3.zero
        var wDiagonal = Vector3(-1, -1, -1)
        if restDetected && parameters.restBiasEstimation {
            e = restGyroscopeLowPass.output - bias
            r = .identity
            let rw = coefficients.biasRestW
            wDiagonal = Vector3(rw, rw, rw)
        } else if parameters.motionBiasEstimation && !skipMotionBiasOnce {
            let ts = coefficients.acc.interval
            e = Vector3(
                -accEarth.y / ts + biasLp.x - r.r0.dot(bias),
                accEarth.x / ts + biasLp.y - r.r1.dot(bias),
                -r.r2.dot(bias)
            )
            wDiagonal = Vector3(coefficients.biasMotionW, coefficients.biasMotionW, coefficients.biasVerticalW)
        }
        skipMotionBiasOnce = false

        // Step 1: P = P + V, also without a measurement.
        let p0 = coefficients.biasP0
        let v = coefficients.biasV
        if biasP.r0.x < p0 { biasP.r0.x += v }
        if biasP.r1.y < p0 { biasP.r1.y += v }
        if biasP.r2.z < p0 { biasP.r2.z += v }
        guard wDiagonal.x >= 0 else { return }

        // Clipping the disagreement also limits the harm of the first, large inclination correction.
        e = clip(e, biasClip)
        // Step 2: K = P Rᵀ (W + R P Rᵀ)⁻¹.
        var k = r * (biasP * r.transposed)
        k.r0.x += wDiagonal.x
        k.r1.y += wDiagonal.y
        k.r2.z += wDiagonal.z
        k = biasP * (r.transposed * k.inverse)
        // Step 3: b = b + K e. Step 4: P = P − K R P.
        bias += k * e
        biasP = biasP - (k * r) * biasP
        bias = clip(bias, biasClip)
    }
}
