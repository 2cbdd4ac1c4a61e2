import MotionModel

/// What `MagnetometerCalibrator` keeps across restarts: its well-spread samples and the fit.
package struct MagnetometerCalibrationState: Sendable, Hashable, Codable {
    /// Raw samples, µT, at most one per direction cell (≤ 54).
    package var samples: [Vector3]
    /// Hard iron, µT.
    package var hardIron: Vector3
    /// Soft-iron correction by rows (det 1).
    package var softIronRows: [Vector3]
    /// Norm of the calibrated field, µT (0 before the calibration was evaluated).
    package var fieldNorm: Double
    /// RMS relative residual, nil before the calibration was evaluated.
    package var relativeResidual: Double?

    package init(
        samples: [Vector3],
        hardIron: Vector3,
        softIronRows: [Vector3],
        fieldNorm: Double,
        relativeResidual: Double?
    ) {
        self.samples = samples
        self.hardIron = hardIron
        self.softIronRows = softIronRows
        self.fieldNorm = fieldNorm
        self.relativeResidual = relativeResidual
    }
}
