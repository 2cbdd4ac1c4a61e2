/// The sampling rates a device accepts, as the kernel's `sampling_frequency_available` lists them:
/// either discrete values or a `[min step max]` range.
package enum SupportedRates: Sendable, Hashable {
    /// Discrete rates in Hz (any order in, ascending after `init`).
    case list([Double])
    /// Every rate `min + k·step` up to `max`, in Hz. `step == 0` means continuous.
    case range(min: Double, step: Double, max: Double)

    package var maximum: Double {
        switch self {
        case .list(let rates): rates.max() ?? 0
        case .range(_, _, let max): max
        }
    }

    package var minimum: Double {
        switch self {
        case .list(let rates): rates.min() ?? 0
        case .range(let min, _, _): min
        }
    }

    /// The lowest supported rate that is at least `requestedHz`; requests above the maximum get the
    /// maximum (as Core Motion clamps update intervals to what the hardware supports).
    package func lowest(atLeast requestedHz: Double) -> Double {
        switch self {
        case .list(let rates):
            let sorted = rates.sorted()
            return sorted.first { $0 >= requestedHz - 1e-9 } ?? (sorted.last ?? 0)
        case .range(let min, let step, let max):
            if requestedHz <= min { return min }
            if requestedHz >= max { return max }
            guard step > 0 else { return requestedHz }
            let k = ((requestedHz - min) / step - 1e-9).rounded(.up)
            return Swift.min(max, min + k * step)
        }
    }
}
