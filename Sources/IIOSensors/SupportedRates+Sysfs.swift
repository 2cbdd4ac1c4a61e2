import AgentPorts

extension SupportedRates {
    /// Parses `sampling_frequency_available` as the kernel prints it: a space-separated list
    /// ("12.500000 25.000000 50.000000") or a range "[min step max]" (sysfs-bus-iio). Nil when it holds no
    /// positive finite rate.
    package init?(sysfs text: String) {
        let trimmed = Substring(text).trimmingWhitespace()
        if trimmed.hasPrefix("[") {
            guard trimmed.hasSuffix("]") else { return nil }
            let inner = trimmed.dropFirst().dropLast()
            let parts = inner.split(whereSeparator: { $0 == " " || $0 == "\t" }).compactMap { Double($0) }
            guard parts.count == 3, parts.allSatisfy({ $0.isFinite && $0 >= 0 }), parts[2] >= parts[0],
                parts[2] > 0
            else { return nil }
            self = .range(min: parts[0], step: parts[1], max: parts[2])
            return
        }
        let rates = trimmed.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\n" })
            .compactMap { Double($0) }
            .filter { $0.isFinite && $0 > 0 }
        guard !rates.isEmpty else { return nil }
        self = .list(Array(Set(rates)).sorted())
    }

    /// The rates two sensor types of one device both accept (bmi160 lists accel and gyro separately). Lists
    /// intersect; when nothing is common, or a range is involved, the first is kept and each type is clamped
    /// to its own rates when written.
    func common(with other: SupportedRates) -> SupportedRates {
        switch (self, other) {
        case (.list(let a), .list(let b)):
            let shared = Set(a).intersection(b)
            return shared.isEmpty ? self : .list(shared.sorted())
        default:
            return self
        }
    }

    /// Rates offered for a device read by polling `_raw`/`_input` attributes when the driver has no
    /// `sampling_frequency`: the agent paces the reads itself, 0.1–100 Hz.
    static let polling = SupportedRates.range(min: 0.1, step: 0, max: 100)

    var summary: String {
        switch self {
        case .list(let rates): rates.map(\.compactDescription).joined(separator: " ")
        case .range(let min, let step, let max):
            step > 0
                ? "\(min.compactDescription)…\(max.compactDescription) step \(step.compactDescription)"
                : "\(min.compactDescription)…\(max.compactDescription)"
        }
    }
}

extension Double {
    /// "100" rather than "100.0"; other values as Swift prints them.
    var compactDescription: String {
        if self == rounded(), abs(self) < 1e15 { return String(Int64(self)) }
        return String(self)
    }
}
