import AgentPorts

extension SupportedRates {
    /// The highest supported rate at most `limitHz`; the minimum when even that is above the limit.
    /// `motion-agent record` takes the highest rate ≤ 200 Hz by default: enough for human motion (Core Motion
    /// itself delivers at most 100 Hz to apps) without filling the disk at a gyro's kHz rates.
    func highest(atMost limitHz: Double) -> Double {
        switch self {
        case .list(let rates):
            return rates.filter { $0 <= limitHz + 1e-9 }.max() ?? rates.min() ?? 0
        case .range(let min, let step, let max):
            if limitHz >= max { return max }
            if limitHz <= min { return min }
            guard step > 0 else { return limitHz }
            let k = ((limitHz - min) / step + 1e-9).rounded(.down)
            return min + k * step
        }
    }
}
