import AgentConfig
import AgentPorts
import Foundation
import Logging
import MotionModel

/// `motion-agent process`: runs the live agent's estimator streams over a recording as fast as the CPU
/// allows and writes every message they publish, one JSON object a line:
/// `{"stream": "device-motion", "message": {…the payload exactly as published…}}`.
///
/// The same hub, streams and encoders as the live agent, fed synchronously; device motion publishes one
/// message per gyroscope sample. Raw sensor streams are off: the input is the raw data.
public struct OfflineProcessor {
    public var configuration: AgentConfiguration
    public var referenceFrame: AttitudeReferenceFrame?
    public var logger: Logger

    public init(configuration: AgentConfiguration, referenceFrame: AttitudeReferenceFrame?, logger: Logger) {
        self.configuration = configuration
        self.referenceFrame = referenceFrame
        self.logger = logger
    }

    public struct Summary: Sendable {
        public var samples: Int
        public var messages: [String: Int]
        public var seconds: Double
    }

    /// - Parameters:
    ///   - samples: the recording's samples in order (Recording's reader parses the CSV).
    ///   - sensors: the sensors the recording holds; `fastestRateHz` its fastest sensor's rate (nil: 100 Hz).
    public func run(
        samples: [IMUSample],
        sensors: Set<SensorType>,
        fastestRateHz: Double?,
        output: FileHandle
    ) throws -> Summary {
        let started = WallClock.monotonicNow()
        let rate = fastestRateHz ?? 100
        let device = SensorDevice(id: "replay", name: "recording", sensors: sensors, supportedRates: .list([rate]))
        var config = configuration
        if let referenceFrame { config.deviceMotion.referenceFrame = referenceFrame }
        let root = "process"
        let topics = TopicScheme(root: root)
        let topicTable = TopicTable()
        let declination = try StreamCatalog.declination(for: config.location, on: WallClock.realtimeNow())
        let catalog = StreamCatalog(
            configuration: config,
            topics: topics,
            topicTable: topicTable,
            declinationDegrees: declination
        )
        if config.deviceMotion.referenceFrame == .xTrueNorthZVertical && declination == nil {
            throw AgentError(
                "xTrueNorthZVertical needs the magnetic declination: set location.latitude and location.longitude in the config passed with --config"
            )
        }
        let outbox = Outbox(capacityBytes: 16 << 20)
        let hub = SensorHub(outbox: outbox)
        var streams: [any MotionStream] = []
        var demands: [SensorType: Double] = [:]
        var settingsByName: [StreamName: StreamSettings] = [:]
        for name in StreamName.allCases where !name.isRawSensor {
            var settings = config.streams[name] ?? StreamName.defaultSettings[name]!
            if name == .deviceMotion { settings.enabled = true }
            let stream = catalog.make(name, settings)
            if let motion = stream as? DeviceMotionStream {
                motion.publishesEverySample = true
                // config.yaml's reference attitude, set when processing starts (no state directory here).
                motion.referenceAttitude = config.deviceMotion.referenceAttitude.map {
                    ReferenceAttitude(quaternion: $0, time: WallClock.realtimeNow())
                }
            }
            for (sensor, r) in stream.sensorDemandsHz(settings: settings) {
                demands[sensor] = max(demands[sensor] ?? 0, r)
            }
            settingsByName[name] = settings
            streams.append(stream)
        }
        let plan = RatePlanner.plan(devices: [device], demandsHz: demands)
        for stream in streams {
            stream.configure(
                settings: settingsByName[stream.name]!,
                sensorRatesHz: plan.sensorRatesHz,
                topicID: topicTable.id(for: topics.stream(stream.name))
            )
        }
        hub.setStreams(streams)

        var counts: [String: Int] = [:]
        var line = [UInt8]()
        line.reserveCapacity(4096)
        var pending = Data()
        pending.reserveCapacity(1 << 20)
        func drain() {
            while outbox.withOldest(
                timeout: 0,
                { message in
                    let topic = topicTable.topic(message.topicID) ?? ""
                    let name = topic.hasPrefix(root + "/") ? String(topic.dropFirst(root.count + 1)) : topic
                    counts[name, default: 0] += 1
                    line.removeAll(keepingCapacity: true)
                    line.append(contentsOf: Array("{\"stream\":\"\(name)\",\"message\":".utf8))
                    line.append(contentsOf: message.payload)
                    line.append(contentsOf: Array("}\n".utf8))
                    pending.append(contentsOf: line)
                    return .published
                }
            ) {}
            if pending.count > 512 << 10 {
                output.write(pending)
                pending.removeAll(keepingCapacity: true)
            }
        }
        for sample in samples {
            hub.ingest(sample)
            drain()
        }
        drain()
        output.write(pending)
        let dropped = outbox.snapshot.droppedOverflow
        if dropped > 0 { throw AgentError("\(dropped) messages were dropped while processing: report this as a bug") }
        return Summary(samples: samples.count, messages: counts, seconds: WallClock.monotonicNow() - started)
    }
}
