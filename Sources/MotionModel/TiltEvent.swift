/// The device's tilt crossed the edge of the cone around its reference: it left the cone (`isTilted`) or came
/// back inside it.
public struct TiltEvent: Sendable, Equatable, Codable {
    /// s on the sample clock.
    public var date: Double
    /// True when the tilt left the cone, false when it came back inside (below the cone minus the hysteresis).
    public var isTilted: Bool
    /// The angle between the direction of gravity now and in the reference, rad (0…π).
    public var angle: Double

    @inlinable
    public init(date: Double, isTilted: Bool, angle: Double) {
        self.date = date
        self.isTilted = isTilted
        self.angle = angle
    }
}
