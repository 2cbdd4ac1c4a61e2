import MotionModel

/// Online hard- and soft-iron calibration of the magnetometer.
///
/// Samples are kept one per direction cell (`MagnetometerSampleBins`, 54 cells), refreshed at most once a
/// second per cell. The calibration starts as the identity. Every `refitInterval` seconds, when the cells
/// changed, the current calibration is evaluated on them (relative RMS of the calibrated norm); only if
/// it explains them worse than 4 % is a sphere (hard iron) fitted, and an ellipsoid (hard and soft iron)
/// once all six cube faces and 24 cells are covered (used when it fits better and its axis ratio is
/// ≤ 1.5). A new fit needs ≥ 12 cells on ≥ 4 faces, < 5 % residual and half the current residual. This
/// hysteresis matters: refitting a good calibration only fits the noise and the place's field
/// inhomogeneity, which moves the hard iron by µT and the heading by degrees (seen on BROAD).
///
/// A hard iron that moves with the device (a magnet or a steel part attached to it) shifts the whole
/// sphere. While calibrated samples stay off the fitted radius (relative residual, low-passed over 1 s,
/// above 8 %; `isConsistent` is false then), they are collected in a second, candidate set; when that set
/// covers ≥ 12 cells on ≥ 4 faces and fits a sphere within 3 %, it replaces the calibration. The replaced
/// calibration is remembered: when the samples sit on its sphere again for 2 s (the magnet was taken off)
/// it comes back at once. For 20 s after any change, every better sphere fit is taken, refining the quick
/// first estimate. A passing disturbance does not fit a sphere and never replaces the calibration; the
/// candidate set is dropped after 5 s of consistent samples.
///
/// Accuracy (Core Motion's levels) from coverage and residual, recomputed at each refit:
/// - `low`: ≥ 8 cells on ≥ 3 faces, residual < 10 %;
/// - `medium`: ≥ 16 cells on ≥ 5 faces, residual < 5 %;
/// - `high`: ≥ 26 cells on 6 faces, residual < 2 %;
/// and one level lower while the current samples disagree with the calibration (`isConsistent` false).
///
/// Per sample the cost is a cell lookup and one calibrated norm; a refit (at most every `refitInterval`)
/// solves at most a 9 × 9 system. Nothing is allocated.
package struct MagnetometerCalibrator: Sendable {
    var bins = MagnetometerSampleBins()
    var candidate = MagnetometerSampleBins()
    var candidateSum = Vector3.zero
    var candidateCount = 0.0
    var fit = MagnetometerFit.identity
    var lastFitTime = -Double.infinity
    var binsChanged = false
    var residualAverage = 0.0
    var consistentTime = 0.0
    /// The calibration before the last change, with its samples, to return to when the cause goes away
    /// (a magnet taken off again).
    var previous: (fit: MagnetometerFit, bins: MagnetometerSampleBins)?
    var previousResidualAverage = 1.0
    var previousConsistentTime = 0.0
    /// For 20 s after a change of calibration every better fit is taken, so a quick first estimate from
    /// few cells is refined as the cells fill with samples taken after the change.
    var provisionalUntil = -Double.infinity
    var isProvisional: Bool { lastTimestamp < provisionalUntil }
    var lastTimestamp = Double.nan

    /// Seconds between refits at most.
    package var refitInterval = 0.5

    package init() {}

    /// Whether the current calibration (at first the identity) has been checked against enough samples.
    var isEvaluated: Bool { fit.radius > 0 }

    /// Hard iron, µT (zero until a fit replaced the identity).
    package var hardIron: Vector3 { fit.offset }
    /// Soft-iron correction (det 1; identity until a fit replaced the identity), rows.
    package var softIron: (r0: Vector3, r1: Vector3, r2: Vector3) {
        let m = fit.softIron
        return (m.r0, m.r1, m.r2)
    }
    /// Norm of the calibrated field, µT (0 until evaluated).
    package var fieldNorm: Double { fit.radius }
    /// RMS relative residual of the calibration over the kept samples (infinity until evaluated).
    package var relativeResidual: Double { fit.relativeResidual }

    /// False while the latest samples are off the calibrated sphere (relative residual low-passed over
    /// 1 s above 8 %): the field is disturbed or the calibration is out of date, and its direction should
    /// not steer the heading. True before the calibration could be evaluated.
    package var isConsistent: Bool { !isEvaluated || residualAverage <= 0.08 }

    /// The calibrated field for `raw` (µT) without learning from it.
    @inline(__always)
    package func calibrate(_ raw: Vector3) -> Vector3 { fit.calibrate(raw) }

    package var accuracy: MagneticFieldAccuracy {
        guard residualAverage > 0.08 else { return coverageAccuracy }
        switch coverageAccuracy {
        case .high: return .medium
        case .medium: return .low
        default: return .uncalibrated
        }
    }

    /// The level from coverage and fit residual alone, recomputed at each refit.
    var coverageAccuracy: MagneticFieldAccuracy = .uncalibrated

    mutating func updateCoverageAccuracy() {
        guard isEvaluated else {
            coverageAccuracy = .uncalibrated
            return
        }
        let n = bins.count
        let faces = bins.faceCount
        let r = fit.relativeResidual
        if n >= 26, faces == 6, r < 0.02 {
            coverageAccuracy = .high
        } else if n >= 16, faces >= 5, r < 0.05 {
            coverageAccuracy = .medium
        } else if n >= 8, faces >= 3, r < 0.10 {
            coverageAccuracy = .low
        } else {
            coverageAccuracy = .uncalibrated
        }
    }

    /// Learns from one raw sample (µT) taken at `timestamp` (s) and returns it calibrated. Non-finite or
    /// zero samples are ignored and returned unchanged.
    @discardableResult
    package mutating func update(_ raw: Vector3, timestamp: Double) -> Vector3 {
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
                if let p = previous {
                    let rp = abs(p.fit.calibrate(raw).norm - p.fit.radius) / p.fit.radius
                    previousResidualAverage += min(dt, 1) * (rp - previousResidualAverage)
                    previousConsistentTime = previousResidualAverage < 0.03 ? previousConsistentTime + dt : 0
                    // 2 s of samples on the old sphere while off the current one: back to the old calibration.
                    if previousConsistentTime > 2 {
                        swapWithPrevious()
                        updateCoverageAccuracy()
                        return calibrate(raw)
                    }
                }
                candidateSum += raw
                candidateCount += 1
                if candidate.insert(raw, center: candidateSum / candidateCount, timestamp: timestamp, refresh: 1) {
                    binsChanged = true
                }
            } else {
                consistentTime += dt
                previousResidualAverage = 1
                previousConsistentTime = 0
                if consistentTime > 5, candidate.count > 0 { dropCandidate() }
            }
        }

        if binsChanged, timestamp - lastFitTime >= refitInterval {
            refit(timestamp: timestamp)
            updateCoverageAccuracy()
        }
        return calibrate(raw)
    }

    private mutating func replace(with newFit: MagnetometerFit, bins newBins: MagnetometerSampleBins) {
        if isEvaluated { previous = (fit, bins) }
        fit = newFit
        bins = newBins
        residualAverage = 0
        previousResidualAverage = 1
        previousConsistentTime = 0
        provisionalUntil = lastTimestamp + 20
        dropCandidate()
    }

    private mutating func swapWithPrevious() {
        guard let p = previous else { return }
        replace(with: p.fit, bins: p.bins)
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
            replace(with: c, bins: candidate)
            return
        }
        guard bins.count >= 8, bins.faceCount >= 3, let current = MagnetometerFit.evaluate(fit, bins) else { return }
        fit = current
        // Hysteresis: a calibration that explains the samples within 4 % is kept. Refitting a good one
        // only trades it for the fit of the noise and of the place's field inhomogeneity, which moves
        // the hard iron by a few µT and the heading by degrees.
        guard current.relativeResidual > 0.04 || isProvisional, var best = MagnetometerFit.sphere(bins),
            best.radius > 5, best.radius < 500
        else { return }
        // Soft iron only from a settled calibration: on the partial coverage right after a change the
        // ellipsoid trades radius for residual and drifts.
        if !isProvisional, bins.count >= 24, bins.faceCount == 6,
            let e = MagnetometerFit.ellipsoid(bins, around: best.offset),
            e.relativeResidual < best.relativeResidual, Self.isPlausibleSoftIron(e.softIron)
        {
            best = e
        }
        if isProvisional {
            if best.relativeResidual < current.relativeResidual { fit = best }
        } else if bins.count >= 12, bins.faceCount >= 4, best.relativeResidual < 0.05,
            best.relativeResidual < 0.5 * current.relativeResidual
        {
            replace(with: best, bins: bins)
        }
    }

    static func isPlausibleSoftIron(_ w: Matrix3x3) -> Bool {
        let e = SymmetricEigen(w).values
        let lo = min(e.x, min(e.y, e.z))
        let hi = max(e.x, max(e.y, e.z))
        return lo > 0 && hi / lo <= 1.5
    }

    // MARK: - Persistence

    package var persistentState: MagnetometerCalibrationState {
        MagnetometerCalibrationState(
            samples: bins.storedSamples,
            hardIron: hardIron,
            softIronRows: [fit.softIron.r0, fit.softIron.r1, fit.softIron.r2],
            fieldNorm: fieldNorm,
            relativeResidual: isEvaluated ? fit.relativeResidual : nil
        )
    }

    /// Restores a saved calibration: the fit is used at once, the samples seed the cells (their age is
    /// set to `timestamp`, s, so fresh samples replace them after a second).
    package mutating func restore(_ state: MagnetometerCalibrationState, timestamp: Double = 0) {
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
                radius: state.fieldNorm,
                relativeResidual: r
            )
        }
        dropCandidate()
        residualAverage = 0
        previous = nil
        provisionalUntil = -.infinity
        updateCoverageAccuracy()
    }
}
