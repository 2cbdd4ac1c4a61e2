import MotionModel

/// What `MagnetometerCalibrator` keeps across restarts: its well-spread samples and the fit.
public struct MagnetometerCalibrationState: Sendable, Hashable, Codable {
    /// Raw samples, µT, at most one per direction cell (≤ 54).
    public var samples: [Vector3]
    /// Hard iron, µT.
    public var hardIron: Vector3
    /// Soft-iron correction by rows (det 1).
    public var softIronRows: [Vector3]
    /// Norm of the calibrated field, µT (0 before the calibration was evaluated).
    public var fieldNorm: Double
    /// RMS relative residual, nil before the calibration was evaluated.
    public var relativeResidual: Double?

    public init(
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
