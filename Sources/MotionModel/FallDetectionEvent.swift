/// A fall, like Core Motion's `CMFallDetectionEvent`: when it happened and how it was resolved, with what the
/// detector measured.
///
/// The detector reports a fall twice: once as soon as it is sure (`resolution` nil), then once more with the
/// resolution and its date. Both reports carry the same `date`, the time of the impact, which identifies the fall.
public struct FallDetectionEvent: Sendable, Equatable, Codable {
    /// Core Motion's `CMFallDetectionEvent.UserResolution`. Core Motion learns it from the wearer's answer to an
    /// alert; a headless device learns `rejected` and `unresponsive` from the motion after the fall and
    /// `confirmed` and `dismissed` from an operator.
    public enum Resolution: String, Sendable, Equatable, Codable, CaseIterable {
        /// Someone (an operator) confirmed the fall.
        case confirmed
        /// Someone (an operator) dismissed the alert without saying whether it was a fall.
        case dismissed
        /// Normal activity resumed within the response window: the wearer got up (Core Motion: the user rejected
        /// the fall).
        case rejected
        /// No recovery motion within the response window (Core Motion: the user did not respond and the system
        /// detected no recovery motions).
        case unresponsive
    }

    /// The time of the impact, s on the sample clock (Core Motion's `date`).
    public var date: Double
    /// nil in the first report; set in the follow-up.
    public var resolution: Resolution?
    /// The largest acceleration magnitude of the impact, g.
    public var peakAcceleration: Double
    /// The angle between the direction of gravity in the device before the fall and after it, rad (0…π).
    public var orientationChange: Double
    /// When the detector was sure, s on the sample clock (the first report's time).
    public var detectionDate: Double
    /// When the resolution was reached, s on the sample clock; nil while unresolved.
    public var resolutionDate: Double?

    @inlinable
    public init(
        date: Double,
        resolution: Resolution? = nil,
        peakAcceleration: Double,
        orientationChange: Double,
        detectionDate: Double,
        resolutionDate: Double? = nil
    ) {
        self.date = date
        self.resolution = resolution
        self.peakAcceleration = peakAcceleration
        self.orientationChange = orientationChange
        self.detectionDate = detectionDate
        self.resolutionDate = resolutionDate
    }

    /// This fall with its resolution.
    @inlinable
    public func resolved(_ resolution: Resolution, at time: Double) -> FallDetectionEvent {
        var e = self
        e.resolution = resolution
        e.resolutionDate = time
        return e
    }
}
