/// The acceleration magnitude stayed near zero: the device was falling freely (dropped, thrown, or its wearer in
/// the air).
public struct FreeFallEvent: Sendable, Equatable, Codable {
    /// The first sample below the free-fall threshold, s on the sample clock.
    public var date: Double
    /// How long the magnitude stayed below the threshold, s.
    public var duration: Double
    /// The height a body falls from rest in that time, ½ g t², m.
    public var height: Double

    @inlinable
    public init(date: Double, duration: Double, height: Double) {
        self.date = date
        self.duration = duration
        self.height = height
    }

    /// The height fallen from rest in `duration` s under standard gravity, m.
    @inlinable
    public static func height(falling duration: Double) -> Double {
        0.5 * standardGravity * duration * duration
    }
}
