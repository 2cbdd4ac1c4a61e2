/// What the user is doing, like Core Motion's `CMMotionActivity`.
///
/// The flags are not exclusive: a car waiting at a red light is `automotive` and `stationary` at once.
/// `unknown` is set when the estimate has too little data (the first window after start) or the device is
/// being handled in a way none of the classes describes.
public struct MotionActivity: Sendable, Equatable, Codable {
    /// Core Motion's `CMMotionActivityConfidence`.
    public enum Confidence: String, Sendable, Equatable, Codable, CaseIterable, Comparable {
        case low
        case medium
        case high

        @inlinable
        public static func < (a: Confidence, b: Confidence) -> Bool { a.rank < b.rank }

        @inlinable
        var rank: Int {
            switch self {
            case .low: 0
            case .medium: 1
            case .high: 2
            }
        }
    }

    /// When this activity began, s on the sample clock.
    public var startDate: Double
    public var stationary: Bool
    public var walking: Bool
    public var running: Bool
    public var automotive: Bool
    public var cycling: Bool
    public var unknown: Bool
    public var confidence: Confidence

    @inlinable
    public init(
        startDate: Double,
        stationary: Bool = false,
        walking: Bool = false,
        running: Bool = false,
        automotive: Bool = false,
        cycling: Bool = false,
        unknown: Bool = false,
        confidence: Confidence = .low
    ) {
        self.startDate = startDate
        self.stationary = stationary
        self.walking = walking
        self.running = running
        self.automotive = automotive
        self.cycling = cycling
        self.unknown = unknown
        self.confidence = confidence
    }

    /// Whether two activities report the same flags and confidence (the start date aside): the agent
    /// publishes on change, and a new segment starts only when the flags change.
    @inlinable
    public func hasSameFlags(as other: MotionActivity) -> Bool {
        stationary == other.stationary && walking == other.walking && running == other.running
            && automotive == other.automotive && cycling == other.cycling && unknown == other.unknown
    }
}
