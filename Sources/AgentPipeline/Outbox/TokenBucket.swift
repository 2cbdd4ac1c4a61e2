/// A token bucket: `rate` tokens a second, holding at most a tenth of a second's worth (at least one), so a
/// backlog drains at `rate` while a live stream slower than `rate` is never held back.
struct TokenBucket {
    let rate: Double
    let capacity: Double
    private var tokens: Double
    private var last: Double?

    init(rate: Double) {
        self.rate = max(0.001, rate)
        capacity = max(1, self.rate / 10)
        tokens = capacity
    }

    /// Takes one token if there is one at `now` (seconds, monotonic).
    mutating func take(now: Double) -> Bool {
        if let last { tokens = min(capacity, tokens + (now - last) * rate) }
        last = now
        guard tokens >= 1 else { return false }
        tokens -= 1
        return true
    }

    /// Gives back a token that was taken but not used.
    mutating func refund() { tokens = min(capacity, tokens + 1) }
}
