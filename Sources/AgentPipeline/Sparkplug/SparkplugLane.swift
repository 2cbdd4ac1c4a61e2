import AgentPorts
import MotionModel
import MotionWire
import SparkplugB
import Synchronization

/// Sparkplug's lane beside the native outbox: the streams' samples as DDATA bodies (no `seq`, no payload
/// timestamp — the edge node's driver stamps those when it publishes), one device per stream the operator
/// chose (`sparkplug.streams`), in their own bounded `Outbox` so the native topics never wait behind data a
/// Sparkplug session cannot send yet, and the other way round.
///
/// Fed on the acquisition thread from the same call that encodes the native message (`StreamContext`), under
/// its own small lock: recording a value, appending the changed metrics and copying the body into the outbox
/// allocate nothing. While no Sparkplug session is born the bodies wait here (oldest dropped when full) and go
/// out flagged `is_historical` after the next birth (store and forward, docs/sparkplug.md).
package final class SparkplugLane: Sendable {
    package let catalog: SparkplugCatalog
    /// DDATA bodies; each message's topic id is its device's index in `catalog.devices`.
    package let outbox: Outbox
    private let writers: Mutex<[SparkplugDeviceWriter]>
    /// The device index of each payload kind (`PayloadKind.allCases` order); -1 where the stream is not carried.
    private let deviceOfKind: [Int]

    package init(catalog: SparkplugCatalog, capacityBytes: Int = 1 << 20) {
        self.catalog = catalog
        outbox = Outbox(capacityBytes: capacityBytes)
        var writers = catalog.devices.indices.map { SparkplugDeviceWriter(catalog: catalog, device: $0) }
        // Every metric starts as null, and the DBIRTH says so: the first DDATA carries only what was measured,
        // not nulls stamped at time 0 for the metrics no sample has set yet.
        for index in writers.indices { _ = writers[index].birth(catalog: catalog) }
        self.writers = Mutex(writers)
        deviceOfKind = PayloadKind.allCases.map { kind in
            catalog.deviceIndex(of: kind.stream.rawValue) ?? -1
        }
    }

    /// Whether the lane carries `stream`.
    package func carries(_ stream: StreamName) -> Bool { catalog.deviceIndex(of: stream.rawValue) != nil }

    /// Records one published sample (`wallTimeMs`: when it was measured) and queues the changed metrics.
    /// Allocation-free: the hot path calls it for every message a carried stream publishes.
    package func record(_ payload: StreamPayload, wallTimeMs t: UInt64) {
        let device = deviceOfKind[Self.kindIndex(payload)]
        guard device >= 0 else { return }
        let outbox = self.outbox
        writers.withLock { writers in
            writers[device].reset()
            Self.record(payload, into: &writers[device], timeMs: t)
            guard writers[device].appendChanges() > 0 else { return }
            writers[device].encoder.bytes.withUnsafeBytes {
                _ = outbox.enqueue(topicID: device, qos: 0, retain: false, payload: $0)
            }
        }
    }

    /// Records a stream's settings (`config/enabled`, `config/rateHz`, `config/effectiveRateHz`) and queues
    /// them when they changed. Returns whether they did.
    @discardableResult
    package func recordSettings(
        _ stream: StreamName,
        enabled: Bool,
        rateHz: Double,
        effectiveRateHz: Double,
        wallTimeMs: UInt64
    ) -> Bool {
        guard let device = catalog.deviceIndex(of: stream.rawValue) else { return false }
        let dataCount = catalog.devices[device].metrics.count - MotionSparkplug.Config.allCases.count
        let outbox = self.outbox
        return writers.withLock { writers in
            writers[device].reset()
            writers[device].record(
                enabled: enabled,
                rateHz: rateHz,
                effectiveRateHz: effectiveRateHz,
                dataCount: dataCount,
                timeMs: wallTimeMs
            )
            guard writers[device].appendChanges() > 0 else { return false }
            writers[device].encoder.bytes.withUnsafeBytes {
                _ = outbox.enqueue(topicID: device, qos: 0, retain: false, payload: $0)
            }
            return true
        }
    }

    /// The DBIRTH body of device `id` with its current values (nil for a device the lane does not carry);
    /// from here on the device reports only changes.
    package func deviceBirth(_ id: String) -> [UInt8]? {
        guard let device = catalog.deviceIndex(of: id) else { return nil }
        let catalog = self.catalog
        return writers.withLock { $0[device].birth(catalog: catalog) }
    }
}
