import AgentPorts
import MotionModel

/// One channel of a discovered device, as `list-sensors` shows it.
package struct IIOChannelInfo: Sendable, Hashable {
    /// libiio's channel id, e.g. `accel_x`, `pressure`, `timestamp`.
    package var id: String
    package var quantity: IIOQuantity
    /// 0, 1, 2 for x, y, z.
    package var axis: Int?
    /// Kernel units per count (`in_*_scale`); 1 when the driver gives none.
    package var scale: Double
    /// Counts added before scaling (`in_*_offset`); 0 when absent.
    package var offset: Double
    /// The scan type (`le:s16/16>>0`) when the channel can be captured through the buffer.
    package var scanFormat: String?
    /// Whether `_raw` or (processed) `_input` can be polled.
    package var pollable: Bool
    /// Whether the driver gives only the processed `_input` (already in kernel units; no scale applies).
    package var isProcessed: Bool
}

/// A discovered IIO device with what the agent can take from it.
package struct IIODeviceInfo: Sendable, Hashable {
    /// `iio:device0`.
    package var id: String
    /// The driver's name, e.g. `inv_icm42600_accel`.
    package var name: String
    package var channels: [IIOChannelInfo]
    package var sensors: Set<SensorType>
    /// What the device accepts as a whole (per-type lists intersected).
    package var supportedRates: SupportedRates
    /// Per quantity when the driver has `in_<type>_sampling_frequency` (bmi160); empty otherwise.
    package var rateByQuantity: [IIOQuantity: SupportedRates]
    /// Whether the driver has a rate attribute at all; without one the agent paces polling itself.
    package var hasRateAttribute: Bool
    /// `sampling_frequency` as read at discovery, Hz.
    package var currentRateHz: Double?
    /// Whether a kernel buffer (scan elements + `/dev/iio:deviceN`) is available.
    package var isBuffered: Bool
    /// The trigger the device uses or will be given; nil for devices that need none (FIFO drivers) and for
    /// triggered devices with no trigger available, which are then polled.
    package var trigger: String?
    /// Whether the device has a `trigger/current_trigger` attribute at all.
    package var acceptsTrigger: Bool
    /// `current_timestamp_clock` (realtime, monotonic, boottime, …) when the device has a timestamp channel.
    package var timestampClock: String?
    /// The mount matrix applied to each vector sensor, after configuration overrides.
    package var mountMatrices: [SensorType: MountMatrix]
    /// Where each matrix came from: an attribute name, `override` or `none (identity)`.
    package var mountMatrixSources: [SensorType: String]

    package var hasTimestamp: Bool { channels.contains { $0.quantity == .timestamp && $0.scanFormat != nil } }

    /// Whether the agent reads the device by polling `_raw`/`_input`: it has no buffer, or a triggered buffer
    /// and no trigger to fill it (a bmi160 or ak8975 whose interrupt line the board does not wire registers
    /// none, and Debian's kernel builds no software trigger).
    package var isPolled: Bool { !isBuffered || (acceptsTrigger && trigger == nil) }

    /// The port's view of this device.
    package var sensorDevice: SensorDevice {
        SensorDevice(id: id, name: name, sensors: sensors, supportedRates: supportedRates)
    }
}
