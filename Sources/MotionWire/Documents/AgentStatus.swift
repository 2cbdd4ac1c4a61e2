import AgentPorts
import MotionModel

/// The retained `{root}/status` document: the birth after every CONNACK, the will, and the goodbye on a clean
/// shutdown. Consumers read stream rates and sensor availability here.
public struct AgentStatus: Sendable, Codable, Equatable {
    public enum State: String, Sendable, Codable { case online, offline }

    public struct Stream: Sendable, Codable, Equatable {
        public var enabled: Bool
        /// What config or the last command asked for, Hz.
        public var requestedRateHz: Double
        /// What the stream delivers: clamped to the hardware; 0 when stopped or its sensor is missing.
        public var rateHz: Double
        public var qos: Int
        public var retain: Bool
        /// Whether every sensor the stream needs is present.
        public var available: Bool
        /// Why the stream is not delivering, when it is enabled but cannot.
        public var error: String?
        /// device-motion only: the attitude's reference frame.
        public var referenceFrame: String?
        /// Samples per message and the batch encoding (json, binary).
        public var batch: Int
        public var encoding: String
        /// device-motion only, while one is set: the reference attitude `relativeAttitude` is relative to.
        public var referenceAttitude: ReferenceAttitude?

        public init(
            enabled: Bool,
            requestedRateHz: Double,
            rateHz: Double,
            qos: Int,
            retain: Bool,
            available: Bool,
            error: String? = nil,
            referenceFrame: String? = nil,
            batch: Int,
            encoding: String,
            referenceAttitude: ReferenceAttitude? = nil
        ) {
            self.enabled = enabled
            self.requestedRateHz = requestedRateHz
            self.rateHz = rateHz
            self.qos = qos
            self.retain = retain
            self.available = available
            self.error = error
            self.referenceFrame = referenceFrame
            self.batch = batch
            self.encoding = encoding
            self.referenceAttitude = referenceAttitude
        }
    }

    public struct Device: Sendable, Codable, Equatable {
        public var id: String
        public var name: String
        public var sensors: [String]
        /// The sensors switched on now: only those some active stream needs.
        public var activeSensors: [String]
        /// 0 when switched off.
        public var rateHz: Double
        public var supportedRatesHz: String
        public var error: String?

        public init(
            id: String,
            name: String,
            sensors: [String],
            activeSensors: [String],
            rateHz: Double,
            supportedRatesHz: String,
            error: String? = nil
        ) {
            self.id = id
            self.name = name
            self.sensors = sensors
            self.activeSensors = activeSensors
            self.rateHz = rateHz
            self.supportedRatesHz = supportedRatesHz
            self.error = error
        }
    }

    /// Core Motion's availability flags (CMMotionManager, CMPedometer, CMMotionActivityManager,
    /// CMAltimeter), from the sensors found.
    public struct Availability: Sendable, Codable, Equatable {
        public var isAccelerometerAvailable: Bool
        public var isGyroAvailable: Bool
        public var isMagnetometerAvailable: Bool
        public var isBarometerAvailable: Bool
        public var isDeviceMotionAvailable: Bool
        public var isStepCountingAvailable: Bool
        public var isDistanceAvailable: Bool
        public var isFloorCountingAvailable: Bool
        public var isPaceAvailable: Bool
        public var isCadenceAvailable: Bool
        public var isPedometerEventTrackingAvailable: Bool
        public var isActivityAvailable: Bool
        public var isRelativeAltitudeAvailable: Bool
        public var isAbsoluteAltitudeAvailable: Bool
        public var isSubmersionAvailable: Bool
        /// CMMotionManager.availableAttitudeReferenceFrames(): what the sensors and `location` allow.
        public var availableAttitudeReferenceFrames: [String]
        /// Whether `location` is configured (xTrueNorthZVertical needs it for the declination).
        public var isLocationConfigured: Bool

        public init(sensors present: Set<SensorType>, locationConfigured: Bool) {
            let accel = present.contains(.accelerometer)
            let baro = present.contains(.barometer)
            isAccelerometerAvailable = accel
            isGyroAvailable = present.contains(.gyroscope)
            isMagnetometerAvailable = present.contains(.magnetometer)
            isBarometerAvailable = baro
            isDeviceMotionAvailable = accel && isGyroAvailable
            isStepCountingAvailable = accel
            isDistanceAvailable = accel
            isFloorCountingAvailable = accel && baro
            isPaceAvailable = accel
            isCadenceAvailable = accel
            isPedometerEventTrackingAvailable = accel
            isActivityAvailable = accel
            isRelativeAltitudeAvailable = baro
            isAbsoluteAltitudeAvailable = baro
            isSubmersionAvailable = baro
            isLocationConfigured = locationConfigured
            availableAttitudeReferenceFrames = AttitudeReferenceFrame.allCases.filter { frame in
                Availability.unavailableReason(frame, sensors: present, locationConfigured: locationConfigured) == nil
            }.map(\.rawValue)
        }

        /// Why `frame` cannot be used here, or nil when it can.
        public static func unavailableReason(
            _ frame: AttitudeReferenceFrame,
            sensors present: Set<SensorType>,
            locationConfigured: Bool
        ) -> String? {
            if !present.contains(.accelerometer) || !present.contains(.gyroscope) {
                return "device motion needs an accelerometer and a gyroscope, and this device lacks one"
            }
            if frame.needsMagnetometer && !present.contains(.magnetometer) {
                return "\(frame.rawValue) needs a magnetometer and none was found — use xArbitraryZVertical"
            }
            if frame == .xTrueNorthZVertical && !locationConfigured {
                return
                    "xTrueNorthZVertical needs the magnetic declination: set location.latitude and location.longitude in config.yaml"
            }
            return nil
        }
    }

    public var state: State
    public var device: String
    public var agentVersion: String
    public var schemaVersion: Int
    /// Increases by one at every start, in the birth and in the will (like Sparkplug's bdSeq), so a consumer
    /// can tell the will of an earlier run from the current one.
    public var bootCount: UInt64
    public var time: Double
    /// Whether the system clock is synchronized: when false, `time` fields may be far off (1970 on a board
    /// without a real-time clock), while `timestamp` fields stay valid for intervals.
    public var clockSynchronized: Bool?
    public var reason: String?
    public var source: String?
    public var streams: [String: Stream]?
    public var devices: [Device]?
    public var sensors: Availability?
    /// The outbox's counters (memory and durable); absent from the will.
    public var outbox: OutboxStatus?
    /// Each runtime setting's effective value and source, the desired versions in force, the last refused
    /// document; absent from the will.
    public var configuration: ConfigurationStatus?
    /// The broker in use, its protocol and the failovers so far; absent from the will.
    public var broker: BrokerLink?

    /// What the hardware made of the requested settings, per key path: `clamped by hardware to 100 Hz` where a
    /// running stream delivers another rate than it was asked for.
    public var hardwareNotes: [String: String] {
        var notes: [String: String] = [:]
        for (name, stream) in streams ?? [:] where stream.enabled && stream.available && stream.rateHz > 0 {
            if abs(stream.rateHz - stream.requestedRateHz) > 1e-9 {
                let rate = Int(exactly: stream.rateHz).map(String.init) ?? String(stream.rateHz)
                notes["streams.\(name).rate_hz"] = "clamped by hardware to \(rate) Hz"
            }
        }
        return notes
    }

    public init(
        state: State,
        device: String,
        agentVersion: String,
        schemaVersion: Int,
        bootCount: UInt64,
        time: Double,
        clockSynchronized: Bool? = nil,
        reason: String? = nil,
        source: String? = nil,
        streams: [String: Stream]? = nil,
        devices: [Device]? = nil,
        sensors: Availability? = nil,
        outbox: OutboxStatus? = nil,
        configuration: ConfigurationStatus? = nil,
        broker: BrokerLink? = nil
    ) {
        self.state = state
        self.device = device
        self.agentVersion = agentVersion
        self.schemaVersion = schemaVersion
        self.bootCount = bootCount
        self.time = time
        self.clockSynchronized = clockSynchronized
        self.reason = reason
        self.source = source
        self.streams = streams
        self.devices = devices
        self.sensors = sensors
        self.outbox = outbox
        self.configuration = configuration
        self.broker = broker
    }
}

public enum AgentVersion {
    public static let version = "0.1.0"
    /// Bumped when a payload changes incompatibly.
    public static let schemaVersion = 1
}
