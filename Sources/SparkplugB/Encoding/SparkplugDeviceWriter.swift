/// One device's values and its DDATA encoder, for the per-sample path. `set` stores a value where the birth
/// declared the metric (no lookup, no allocation for numbers and literal strings); `appendChanges` writes the
/// metrics whose value differs from the one last sent — report by exception (2.2), so a flag or a state goes
/// out when it changes and a sensor axis whenever it moves — each with its own timestamp. Several samples can be
/// appended to one body (a batch) before it is taken and `reset`.
package struct SparkplugDeviceWriter: Sendable {
    package let device: Int
    package let aliasBase: UInt64
    /// Current values and when each was measured (ms since the epoch), in the device's metric order.
    package private(set) var values: [SparkplugMetricValue]
    package private(set) var timestampsMs: [UInt64]
    private var sent: [SparkplugMetricValue?]
    package private(set) var encoder: SparkplugDataEncoder

    package init(catalog: SparkplugCatalog, device: Int, capacity: Int = 2048) {
        self.device = device
        aliasBase = catalog.aliasBase(ofDevice: device)
        let count = catalog.devices[device].metrics.count
        values = Array(repeating: .null, count: count)
        timestampsMs = Array(repeating: 0, count: count)
        sent = Array(repeating: nil, count: count)
        encoder = SparkplugDataEncoder(capacity: capacity)
    }

    @inline(__always)
    package mutating func set(_ index: Int, _ value: SparkplugMetricValue, timestampMs: UInt64) {
        values[index] = value
        timestampsMs[index] = timestampMs
    }

    /// Appends the changed metrics to the body; returns how many.
    @discardableResult
    package mutating func appendChanges() -> Int {
        var count = 0
        for index in values.indices where sent[index] != values[index] {
            encoder.append(alias: aliasBase + UInt64(index), timestampMs: timestampsMs[index], value: values[index])
            sent[index] = values[index]
            count += 1
        }
        return count
    }

    /// The body built since the last `reset()`.
    package var body: [UInt8] { encoder.bytes }

    package mutating func reset() { encoder.reset() }

    /// The DBIRTH body with the current values; from now on only changes are sent.
    package mutating func birth(catalog: SparkplugCatalog) -> [UInt8] {
        for index in values.indices { sent[index] = values[index] }
        return SparkplugBirthEncoder.deviceBirth(
            catalog: catalog,
            device: device,
            values: values,
            timestampsMs: timestampsMs
        )
    }
}
