/// How a failing device is retried, and when a silent one counts as failing.
package struct IIORetryPolicy: Sendable, Hashable {
    /// First wait after a fault, seconds; doubled after each failed attempt.
    package var initialDelay: Double
    /// Longest wait between attempts, seconds.
    package var maximumDelay: Double
    /// The shortest time a refill may wait for data before the device counts as failing, seconds. The actual
    /// limit is longer for slow rates: four buffer periods plus half a second.
    package var minimumRefillTimeout: Double

    package init(initialDelay: Double, maximumDelay: Double, minimumRefillTimeout: Double) {
        self.initialDelay = initialDelay
        self.maximumDelay = maximumDelay
        self.minimumRefillTimeout = minimumRefillTimeout
    }

    /// 0.5 s doubling to 5 s; a device silent for 1 s (at high rates) is failing.
    package static let standard = IIORetryPolicy(initialDelay: 0.5, maximumDelay: 5, minimumRefillTimeout: 1)
}
