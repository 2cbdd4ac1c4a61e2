import MotionModel

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Heading correction with magnetic disturbance detection and rejection (vqf.cpp `updateMag`, paper
/// section 3.5): the field's norm and dip in the 6D earth frame are compared with a slowly updated
/// reference; while they differ the heading correction pauses (for at most `magneticMaximumRejectionTime`),
/// and a new field that stays steady while the device turns becomes the new reference.
extension AttitudeFilter {
    @inline(__always)
    mutating func updateMagnetometer(_ mag: Vector3, interval: Double) {
        let magEarth = quaternion6D.rotate(mag)
        let p = parameters

        if p.magneticDisturbanceRejection {
            let norm = magEarth.norm
            var normDip = Vector3(norm, -asin(magEarth.z / norm), 0)
            if p.magneticCurrentTau > 0 {
                normDip = magNormDipLowPass.step(normDip, coefficients.magNormDip)
            }
            let dipThreshold = p.magneticDipThreshold * .pi / 180

            // Disturbance detection against the reference.
            if abs(normDip.x - magRefNorm) < p.magneticNormThreshold * magRefNorm
                && abs(normDip.y - magRefDip) < dipThreshold
            {
                magUndisturbedT += interval
                if magUndisturbedT >= p.magneticMinimumUndisturbedTime {
                    magDistDetected = false
                    magRefNorm += coefficients.kMagRef * (normDip.x - magRefNorm)
                    magRefDip += coefficients.kMagRef * (normDip.y - magRefDip)
                }
            } else {
                magUndisturbedT = 0
                magDistDetected = true
            }

            // Acceptance of a new field that stays steady while the device turns.
            if abs(normDip.x - magCandidateNorm) < p.magneticNormThreshold * magCandidateNorm
                && abs(normDip.y - magCandidateDip) < dipThreshold
            {
                if restGyroscopeLowPass.output.norm >= p.magneticNewMinimumGyroscope * .pi / 180 {
                    magCandidateT += interval
                }
                magCandidateNorm += coefficients.kMagRef * (normDip.x - magCandidateNorm)
                magCandidateDip += coefficients.kMagRef * (normDip.y - magCandidateDip)
                if magDistDetected
                    && (magCandidateT >= p.magneticNewTime
                        || (magRefNorm == 0 && magCandidateT >= p.magneticNewFirstTime))
                {
                    magRefNorm = magCandidateNorm
                    magRefDip = magCandidateDip
                    magDistDetected = false
                    magUndisturbedT = p.magneticMinimumUndisturbedTime
                }
            } else {
                magCandidateT = 0
                magCandidateNorm = normDip.x
                magCandidateDip = normDip.y
            }
        }

        // Disagreement between the field's horizontal direction and north (+y of ENU), in [−π, π].
        var disagreement = atan2(magEarth.x, magEarth.y) - delta
        if disagreement > .pi {
            disagreement -= 2 * .pi
        } else if disagreement < -.pi {
            disagreement += 2 * .pi
        }
        lastMagDisAngle = disagreement

        var k = coefficients.kMag
        if p.magneticDisturbanceRejection {
            if magDistDetected {
                if magRejectT <= p.magneticMaximumRejectionTime {
                    magRejectT += interval
                    k = 0
                } else {
                    k /= p.magneticRejectionFactor
                }
            } else {
                magRejectT = max(magRejectT - p.magneticRejectionFactor * interval, 0)
            }
        }

        // Fast initial convergence: the gain is at least 1/N for the N-th sample until t > tauMag.
        if kMagInit != 0 {
            if k < kMagInit { k = kMagInit }
            kMagInit = kMagInit / (kMagInit + 1)
            if kMagInit * p.magnetometerTau < coefficients.magNormDip.interval {
                kMagInit = 0
            }
        }

        lastMagGain = k
        delta += k * disagreement
        if delta > .pi {
            delta -= 2 * .pi
        } else if delta < -.pi {
            delta += 2 * .pi
        }
    }
}
