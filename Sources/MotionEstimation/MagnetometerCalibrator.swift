import MotionModel

/// Online hard- and soft-iron calibration of the magnetometer.
///
/// Samples are kept one per direction cell (`MagnetometerSampleBins`, 54 cells), refreshed at most once a
/// second per cell. Every `refitInterval` seconds, when the set changed, a sphere (hard iron) is fitted,
/// and an ellipsoid (hard and soft iron) once all six cube faces and 24 cells are covered; the ellipsoid is
/// used when it fits better and its soft-iron correction is plausible (axis ratio ≤ 1.5).
///
/// A hard iron that moves with the device (a magnet or a steel part attached to it) shifts the whole
/// sphere. While calibrated samples stay off the fitted radius (relative residual, low-passed over 1 s,
/// above 8 %), they are collected in a second, candidate set; when that set covers ≥ 12 cells on ≥ 4 faces
/// and fits a sphere within 3 %, it replaces the calibration. A passing disturbance does not fit a sphere
/// and never replaces it; the candidate set is dropped after 5 s of consistent samples.
///
/// Accuracy (Core Motion's levels) from coverage and residual:
/// - `low`: ≥ 8 cells on ≥ 3 faces, residual < 10 %;
/// - `medium`: ≥ 16 cells on ≥ 5 faces, residual < 5 %;
/// - `high`: ≥ 26 cells on 6 faces, residual < 2 %;
/// and one level lower while the current samples disagree with the fit (residual EMA > 8 %).
public struct MagnetometerCalibrator: Sendable {
    var bins = MagnetometerSampleBins()
    var candidate = MagnetometerSampleBins()
    var candidateSum = Vector3.zero
    var candidateCount = 0.0
    var fit = MagnetometerFit.identity
    var lastFitTime = -Double.infinity
    var binsChanged = false
    var residualAverage = 0.0
    var consistentTime = 0.0
    var lastTimestamp = Double.nan

    /// Seconds between refits at most.
    public var refitInterval = 0.5

    public init() {}

    /// Whether the current calibration (at first the identity) has been checked against enough samples.
    var isEvaluated: Bool { fit.radius > 0 }

    /// Hard iron, µT (zero until a fit replaced the identity).
    public var hardIron: Vector3 { fit.offset }
    /// Soft-iron correction (det 1; identity until a fit replaced the identity), rows.
    public var softIron: (r0: Vector3, r1: Vector3, r2: Vector3) {
        let m = fit.softIron
        return (m.r0, m.r1, m.r2)
    }
    /// Norm of the calibrated field, µT (0 until evaluated).
    public var fieldNorm: Double { fit.radius }
    /// RMS relative residual of the calibration over the kept samples (infinity until evaluated).
    public var relativeResidual: Double { fit.relativeResidual }

    /// The calibrated field for `raw` (µT) without learning from it.
    @inline(__always)
    public func calibrate(_ raw: Vector3) -> Vector3 { fit.calibrate(raw) }

    public var accuracy: MagneticFieldAccuracy {
        guard isEvaluated else { return .uncalibrated }
        let n = bins.count, faces = bins.faceCount, r = fit.relativeResidual
        var level: MagneticFieldAccuracy
        if n >= 26, faces == 6, r < 0.02 {
            level = .high
        } else if n >= 16, faces >= 5, r < 0.05 {
            level = .medium
        } else if n >= 8, faces >= 3, r < 0.10 {
            level = .low
        } else {
            level = .uncalibrated
        }
        if residualAverage > 0.08 {
            level = level == .high ? .medium : (level == .medium ? .low : .uncalibrated)
        }
        return level
    }

    /// Learns from one raw sample (µT) taken at `timestamp` (s) and returns it calibrated. Non-finite or
    /// zero samples are ignored and returned unchanged.
    @discardableResult
    public mutating func update(_ raw: Vector3, timestamp: Double) -> Vector3 {
        guard raw.isFinite, raw.squaredNorm > 0, timestamp.isFinite else { return raw }
        let dt = lastTimestamp.isNaN ? 0 : min(max(timestamp - lastTimestamp, 0), 1)
        lastTimestamp = timestamp

        if bins.insert(raw, center: hardIron, timestamp: timestamp, refresh: 1) { binsChanged = true }

        if isEvaluated {
            let r = abs(fit.calibrate(raw).norm - fit.radius) / fit.radius
            // 1 s low-pass of the residual.
            residualAverage += min(dt, 1) * (r - residualAverage)
            if residualAverage > 0.08 {
                consistentTime = 0
                candidateSum += raw
                candidateCount += 1
                if candidate.insert(raw, center: candidateSum / candidateCount, timestamp: timestamp, refresh: 1) {
                    binsChanged = true
                }
            } else {
                consistentTime += dt
                if consistentTime > 5, candidate.count > 0 { dropCandidate() }
            }
        }

        if binsChanged, timestamp - lastFitTime >= refitInterval {
            refit(timestamp: timestamp)
        }
        return calibrate(raw)
    }

    private mutating func dropCandidate() {
        candidate.clear()
        candidateSum = .zero
        candidateCount = 0
    }

    mutating func refit(timestamp: Double) {
        lastFitTime = timestamp
        binsChanged = false
        if candidate.count >= 12, candidate.faceCount >= 4, let c = MagnetometerFit.sphere(candidate),
            c.relativeResidual < 0.03, c.radius > 10, c.radius < 200
        {
            bins = candidate
            fit = c
            residualAverage = 0
            dropCandidate()
            return
        }
        guard bins.count >= 8, bins.faceCount >= 3, let current = MagnetometerFit.evaluate(fit, bins) else { return }
        fit = current
        // Hysteresis: a calibration that explains the samples within 4 % is kept. Refitting a good one
        // only trades it for the fit of the noise and of the place's field inhomogeneity, which moves
        // the hard iron by a few µT and the heading by degrees.
        guard current.relativeResidual > 0.04, var best = MagnetometerFit.sphere(bins), best.radius > 5, best.radius < 500
        else { return }
        if bins.count >= 24, bins.faceCount == 6, let e = MagnetometerFit.ellipsoid(bins, around: best.offset),
            e.relativeResidual < best.relativeResidual, Self.isPlausibleSoftIron(e.softIron)
        {
            best = e
        }
        if best.relativeResidual < 0.5 * current.relativeResidual {
            fit = best
            residualAverage = 0
        }
    }

    static func isPlausibleSoftIron(_ w: Matrix3x3) -> Bool {
        let e = SymmetricEigen(w).values
        let lo = min(e.x, min(e.y, e.z)), hi = max(e.x, max(e.y, e.z))
        return lo > 0 && hi / lo <= 1.5
    }

    // MARK: - Persistence

    public var persistentState: MagnetometerCalibrationState {
        MagnetometerCalibrationState(
            samples: bins.storedSamples,
            hardIron: hardIron,
            softIronRows: [fit.softIron.r0, fit.softIron.r1, fit.softIron.r2],
            fieldNorm: fieldNorm,
            relativeResidual: isEvaluated ? fit.relativeResidual : nil)
    }

    /// Restores a saved calibration: the fit is used at once, the samples seed the cells (their age is
    /// set to `timestamp`, s, so fresh samples replace them after a second).
    public mutating func restore(_ state: MagnetometerCalibrationState, timestamp: Double = 0) {
        bins.clear()
        for s in state.samples where s.isFinite {
            bins.insert(s, center: state.hardIron, timestamp: timestamp, refresh: 0)
        }
        if state.softIronRows.count == 3, state.hardIron.isFinite, state.fieldNorm > 0,
            let r = state.relativeResidual, r.isFinite
        {
            fit = MagnetometerFit(
                offset: state.hardIron,
                softIron: Matrix3x3(r0: state.softIronRows[0], r1: state.softIronRows[1], r2: state.softIronRows[2]),
                radius: state.fieldNorm, relativeResidual: r)
        }
        dropCandidate()
        residualAverage = 0
    }
}
