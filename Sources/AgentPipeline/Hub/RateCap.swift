/// "At most `rateHz` times a second" for event streams: a change is published at once if the last
/// publication is at least one interval old, otherwise it waits (the latest value wins) until it is.
package struct RateCap: Sendable, Hashable {
    package private(set) var interval: Double
    private var last = -Double.infinity

    package init(rateHz: Double) {
        interval = rateHz > 0 ? 1 / rateHz : .infinity
    }

    /// Whether a publication at `timestamp` is allowed; if so, it is counted.
    package mutating func allow(_ timestamp: Double) -> Bool {
        // Timestamps going backwards (a new recording) must not block publishing forever.
        guard timestamp - last >= interval - 1e-9 || timestamp < last else { return false }
        last = timestamp
        return true
    }

    package var lastPublished: Double { last }
}
