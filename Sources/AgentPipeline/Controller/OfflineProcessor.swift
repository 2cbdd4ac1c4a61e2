import AgentConfig
import AgentPorts
import Foundation
import Logging
import MotionModel

/// `motion-agent process`: runs the live agent's estimator streams over a recording as fast as the CPU
/// allows and writes every message they publish, one JSON object a line:
/// `{"stream": "device-motion", "message": {…the payload exactly as published…}}`.
///
/// The same pipeline as the live agent (`Pipeline`), fed synchronously; device motion publishes one message per
/// gyroscope sample. Raw sensor streams are off: the input is the raw data.
package struct OfflineProcessor {
    package var configuration: AgentConfiguration
    package var referenceFrame: AttitudeReferenceFrame?
    package var logger: Logger

    package init(configuration: AgentConfiguration, referenceFrame: AttitudeReferenceFrame?, logger: Logger) {
        self.configuration = configuration
        self.referenceFrame = referenceFrame
        self.logger = logger
    }

    package struct Summary: Sendable {
        package var samples: Int
        package var messages: [String: Int]
        package var seconds: Double
    }

    /// - Parameters:
    ///   - samples: the recording's samples in order (Recording's reader parses the CSV).
    ///   - sensors: the sensors the recording holds; `fastestRateHz` its fastest sensor's rate (nil: 100 Hz).
    package func run(
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
        // The raw data is the input: its streams are off. Device motion runs whatever config.yaml says.
        for name in StreamName.allCases where name.isRawSensor { config[stream: name].enabled = false }
        config[stream: .deviceMotion].enabled = true
        // Its own topic root, so the lines name the stream by the topic's levels after it.
        let root = "process"
        config.topics.root = root
        var options = Pipeline.Options()
        options.outboxBytes = 16 << 20
        let fixed = config
        let pipeline = Pipeline(
            configuration: { fixed },
            source: RecordingDevice(device: device),
            options: options,
            logger: logger
        )
        if config.deviceMotion.referenceFrame == .xTrueNorthZVertical && pipeline.field == nil {
            throw AgentError(
                "xTrueNorthZVertical needs the magnetic declination: set location.latitude and location.longitude in the config passed with --config"
            )
        }
        try pipeline.controller.start()
        _ = pipeline.controller.withDeviceMotion { $0.publishesEverySample = true }
        let (outbox, hub, topicTable) = (pipeline.outbox, pipeline.hub, pipeline.topicTable)

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

/// The recording as the controller sees hardware: one device with the recording's sensors at its rate, whose
/// plans change nothing (the samples are fed to the hub directly).
private final class RecordingDevice: SensorSource {
    let summary = "recording"
    let devices: [SensorDevice]
    init(device: SensorDevice) { devices = [device] }
    func apply(_ plan: AcquisitionPlan) throws {}
    func run(into sink: SampleSink) async throws {}
}
