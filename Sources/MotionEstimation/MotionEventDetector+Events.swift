import MotionModel

extension MotionEventDetector {
    /// What one sample produced: at most one event of each kind. Iterating gives them as `MotionEvent`s in the
    /// order a subscriber should see them — an earlier fall's resolution before a new fall, a free fall before the
    /// impact that ends it — without allocating.
    package struct Events: Sendable, Equatable, Sequence {
        /// The follow-up of an earlier fall, with its resolution.
        package var fallResolution: FallDetectionEvent?
        package var freeFall: FreeFallEvent?
        package var impact: ImpactEvent?
        /// A fall the detector just became sure of (`resolution` nil).
        package var fall: FallDetectionEvent?
        package var tilt: TiltEvent?

        package init(
            fallResolution: FallDetectionEvent? = nil,
            freeFall: FreeFallEvent? = nil,
            impact: ImpactEvent? = nil,
            fall: FallDetectionEvent? = nil,
            tilt: TiltEvent? = nil
        ) {
            self.fallResolution = fallResolution
            self.freeFall = freeFall
            self.impact = impact
            self.fall = fall
            self.tilt = tilt
        }

        package var isEmpty: Bool {
            fallResolution == nil && freeFall == nil && impact == nil && fall == nil && tilt == nil
        }

        package func makeIterator() -> Iterator { Iterator(events: self) }

        package struct Iterator: IteratorProtocol {
            let events: Events
            var position = 0

            package mutating func next() -> MotionEvent? {
                while position < 5 {
                    defer { position += 1 }
                    switch position {
                    case 0: if let e = events.fallResolution { return .fall(e) }
                    case 1: if let e = events.freeFall { return .freeFall(e) }
                    case 2: if let e = events.impact { return .impact(e) }
                    case 3: if let e = events.fall { return .fall(e) }
                    default: if let e = events.tilt { return .tilt(e) }
                    }
                }
                return nil
            }
        }
    }
}
