/// How much the calibrated magnetic field can be trusted, Core Motion's `CMMagneticFieldCalibrationAccuracy`.
///
/// Ordered: `uncalibrated < low < medium < high`.
public enum MagneticFieldAccuracy: String, CaseIterable, Sendable, Hashable, Codable, Comparable {
    case uncalibrated
    case low
    case medium
    case high

    private var rank: Int {
        switch self {
        case .uncalibrated: 0
        case .low: 1
        case .medium: 2
        case .high: 3
        }
    }

    public static func < (a: MagneticFieldAccuracy, b: MagneticFieldAccuracy) -> Bool { a.rank < b.rank }
}
