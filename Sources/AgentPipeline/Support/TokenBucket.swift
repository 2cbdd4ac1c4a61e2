/// A token bucket: `rate` tokens a second, holding at most `capacity`. The durable outbox's replay paces its
/// backlog with one (capacity a tenth of a second's worth, so a live stream slower than the rate is never held
/// back); the control door's rate limit is another (capacity the burst). Time never runs backwards for it: a
/// clock that steps back refills nothing.
package struct TokenBucket: Sendable {
    package let rate: Double
    package let capacity: Double
    private var tokens: Double
    private var last: Double?

    /// Full at the start; `now` (seconds, on the clock later calls use) starts the refill, or the first `take`.
    package init(rate: Double, capacity: Double, now: Double? = nil) {
        self.rate = max(0.001, rate)
        self.capacity = max(1, capacity)
        tokens = self.capacity
        last = now
    }

    /// The replay pace: a tenth of a second's worth of tokens, at least one.
    package init(pacing rate: Double) {
        self.init(rate: rate, capacity: max(0.001, rate) / 10)
    }

    /// Takes one token if there is one at `now`.
    package mutating func take(now: Double) -> Bool {
        if let last { tokens = min(capacity, tokens + max(0, now - last) * rate) }
        last = now
        guard tokens >= 1 else { return false }
        tokens -= 1
        return true
    }

    /// Gives back a token that was taken but not used.
    package mutating func refund() { tokens = min(capacity, tokens + 1) }
}
