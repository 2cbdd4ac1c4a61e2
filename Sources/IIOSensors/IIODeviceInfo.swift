import AgentPorts
import MotionModel

/// One channel of a discovered device, as `list-sensors` shows it.
public struct IIOChannelInfo: Sendable, Hashable {
    /// libiio's channel id, e.g. `accel_x`, `pressure`, `timestamp`.
    public var id: String
    public var quantity: IIOQuantity
    /// 0, 1, 2 for x, y, z.
    public var axis: Int?
    /// Kernel units per count (`in_*_scale`); 1 when the driver gives none.
    public var scale: Double
    /// Counts added before scaling (`in_*_offset`); 0 when absent.
    public var offset: Double
    /// The scan type (`le:s16/16>>0`) when the channel can be captured through the buffer.
    public var scanFormat: String?
    /// Whether `_raw` or (processed) `_input` can be polled.
    public var pollable: Bool
    /// Whether the driver gives only the processed `_input` (already in kernel units; no scale applies).
    public var isProcessed: Bool
}

/// A discovered IIO device with what the agent can take from it.
public struct IIODeviceInfo: Sendable, Hashable {
    /// `iio:device0`.
    public var id: String
    /// The driver's name, e.g. `inv_icm42600_accel`.
    public var name: String
    public var channels: [IIOChannelInfo]
    public var sensors: Set<SensorType>
    /// What the device accepts as a whole (per-type lists intersected).
    public var supportedRates: SupportedRates
    /// Per quantity when the driver has `in_<type>_sampling_frequency` (bmi160); empty otherwise.
    public var rateByQuantity: [IIOQuantity: SupportedRates]
    /// Whether the driver has a rate attribute at all; without one the agent paces polling itself.
    public var hasRateAttribute: Bool
    /// `sampling_frequency` as read at discovery, Hz.
    public var currentRateHz: Double?
    /// Whether a kernel buffer (scan elements + `/dev/iio:deviceN`) is available.
    public var isBuffered: Bool
    /// The trigger the device uses or will be given; nil for devices that need none (FIFO drivers) and for
    /// triggered devices with no trigger available, which are then polled.
    public var trigger: String?
    /// Whether the device has a `trigger/current_trigger` attribute at all.
    public var acceptsTrigger: Bool
    /// `current_timestamp_clock` (realtime, monotonic, boottime, …) when the device has a timestamp channel.
    public var timestampClock: String?
    /// The mount matrix applied to each vector sensor, after configuration overrides.
    public var mountMatrices: [SensorType: MountMatrix]
    /// Where each matrix came from: an attribute name, `override` or `none (identity)`.
    public var mountMatrixSources: [SensorType: String]

    public var hasTimestamp: Bool { channels.contains { $0.quantity == .timestamp && $0.scanFormat != nil } }

    /// Whether the agent reads the device by polling `_raw`/`_input`: it has no buffer, or a triggered buffer
    /// and no trigger to fill it (a bmi160 or ak8975 whose interrupt line the board does not wire registers
    /// none, and Debian's kernel builds no software trigger).
    public var isPolled: Bool { !isBuffered || (acceptsTrigger && trigger == nil) }

    /// The port's view of this device.
    public var sensorDevice: SensorDevice {
        SensorDevice(id: id, name: name, sensors: sensors, supportedRates: supportedRates)
    }
}
