import AgentPorts
internal import CLibIIO

extension IIODeviceWorker {
    /// Writes the planned rate — the lowest supported rate at or above it, clamped to the maximum — to
    /// `sampling_frequency` (or each planned type's `in_<type>_sampling_frequency`) and returns what the
    /// hardware reads back. Devices without a rate attribute are paced by the agent at the same choice.
    func applyRate(device: OpaquePointer, plan: DevicePlan) throws(IIOError) -> Double {
        let chosen = info.supportedRates.lowest(atLeast: plan.rateHz)
        guard info.hasRateAttribute else { return chosen }
        if info.rateByQuantity.isEmpty {
            try write(rate: chosen, label: "sampling_frequency") {
                iio_device_attr_write(device, "sampling_frequency", $0)
            }
            return IIOAttribute.double(IIOAttribute.device(device, "sampling_frequency")) ?? chosen
        }
        var effective: Double = 0
        for (quantity, rates) in info.rateByQuantity.sorted(by: { $0.key.rawValue < $1.key.rawValue }) {
            guard let sensor = quantity.sensor, plan.sensors.contains(sensor),
                let handle = device.iioChannels.first(where: {
                    $0.quantity == quantity && iio_channel_find_attr($0.pointer, "sampling_frequency") != nil
                })
            else { continue }
            let rate = rates.lowest(atLeast: plan.rateHz)
            try write(rate: rate, label: "in_\(handle.id.split(separator: "_").first ?? "")_sampling_frequency") {
                iio_channel_attr_write(handle.pointer, "sampling_frequency", $0)
            }
            let readBack = IIOAttribute.double(IIOAttribute.channel(handle.pointer, "sampling_frequency")) ?? rate
            effective = max(effective, readBack)
        }
        return effective > 0 ? effective : chosen
    }

    private func write(rate: Double, label: String, _ body: (String) -> Int) throws(IIOError) {
        let text = rate.compactDescription
        let result = body(text)
        if result < 0 {
            throw IIOError(
                operation: "write \(text) to \(label) of \(info.id) (\(info.name))",
                errno: Int32(-result),
                fix: "the driver refused the rate; check sampling_frequency_available"
            )
        }
    }
}
