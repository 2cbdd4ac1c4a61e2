/// The one loop the harness and the tests wait on a condition with.
package enum Polling {
    /// Checks `condition` until it holds or `timeout` seconds pass; returns whether it held. The last check comes
    /// after the deadline: a task starved of the cooperative pool (2 threads on a 2-core host) can wake past it
    /// with the condition long true. Between checks it sleeps `interval` or 4× what the check took, whichever is
    /// longer, so a check that parses thousands of received messages takes at most a fifth of a core instead of
    /// becoming the load that keeps the agent under test behind (CI once waited 15 s so, every count exact).
    package static func until(
        timeout: Double,
        interval: Duration = .milliseconds(5),
        _ condition: () -> Bool
    ) async -> Bool {
        let clock = ContinuousClock()
        let deadline = clock.now + .seconds(timeout)
        while true {
            let checked = clock.now
            if condition() { return true }
            // A cancelled task's sleep returns at once: stop rather than spin to the deadline.
            if clock.now >= deadline || Task.isCancelled { return false }
            try? await Task.sleep(for: max(interval, (clock.now - checked) * 4))
        }
    }
}
