/// One message of the motion events stream: a fall (its report, then its resolution), an impact, a free fall or a
/// tilt change. Each kind is its own value type; this wraps them so one stream, one queue and one codec switch
/// carry them all, in the order they happened.
public enum MotionEvent: Sendable, Equatable {
    /// A fall: first as soon as the detector is sure (`resolution` nil), then once more with its resolution.
    case fall(FallDetectionEvent)
    case impact(ImpactEvent)
    case freeFall(FreeFallEvent)
    case tilt(TiltEvent)

    /// The kinds, as they are named on the wire and in the settings.
    public enum Kind: String, Sendable, Equatable, Codable, CaseIterable {
        case fall
        case impact
        case freeFall
        case tilt
    }

    @inlinable
    public var kind: Kind {
        switch self {
        case .fall: .fall
        case .impact: .impact
        case .freeFall: .freeFall
        case .tilt: .tilt
        }
    }

    /// When the event happened, s on the sample clock: the impact of a fall (also in its follow-up), the start of
    /// an impact or a free fall, the crossing of a tilt.
    @inlinable
    public var date: Double {
        switch self {
        case .fall(let e): e.date
        case .impact(let e): e.date
        case .freeFall(let e): e.date
        case .tilt(let e): e.date
        }
    }
}
