import MotionModel

/// One stream, whole: its name, the topics it publishes and the payload on each, its settings' defaults, the
/// sensors it needs and the one that paces it, whether it batches, its extra settings, its schema files and its
/// Home Assistant entities. `table` is the only list of streams; the topic scheme, the payload kinds, the config
/// schema, the rate planner's notes, the status, Home Assistant discovery and the docs' checks read it.
/// (`ControlCommandDescriptor` is the same for commands.)
///
/// The table, the names (`StreamName`, `PayloadKind`) and each payload's codec are generated from the stream's
/// declaration (Sources/StreamDeclarations, scripts/codegen/streams/generate.sh). Adding a stream: its declaration
/// there, its `MotionStream` in AgentPipeline (`StreamCatalog.make` names it, and the compiler asks for it) and its
/// prose in docs/payloads.md — README.md, "How it is built", counts what else.
package struct StreamDescriptor: Sendable {
    /// One topic the stream publishes, under the device's root.
    package struct Topic: Sendable, Hashable {
        /// The stream that publishes it.
        package let stream: StreamName
        /// Its levels after the root: the stream's name for its own topic (`device-motion`), more levels for one
        /// it derives (`pedometer/events`).
        package let path: String
        package let payload: PayloadKind
        /// Its JSON Schema, in docs/schemas.
        package let schema: String
        /// The Core Motion type its payload mirrors.
        package let coreMotion: String
    }

    /// One Home Assistant entity that reads a stream topic (MQTT discovery: the sensor and event platforms' keys).
    package struct HomeAssistantSensor: Sendable, Hashable {
        /// The MQTT discovery component: `sensor`, or `event` for an event entity.
        package var component = "sensor"
        /// Unique within the device: `steps`, `acceleration_x`.
        package let objectID: String
        package let name: String
        /// Which of the stream's topics it reads (an index into `topics`; 0 is the stream's own).
        package let topic: Int
        /// Jinja, reading `value_json`.
        package let template: String
        package var unit: String? = nil
        package var deviceClass: String? = nil
        package var stateClass: String? = nil
        package var options: [String]? = nil
        package var icon: String? = nil
        /// An event entity's `event_types`.
        package var eventTypes: [String]? = nil
    }

    package let name: StreamName
    /// The stream's own topic first, then the ones it derives (events, absolute altitude): they share its
    /// settings (QoS, retain, expiry).
    package let topics: [Topic]
    /// Its settings when config.yaml says nothing.
    package let defaults: StreamSettings
    /// Sensors without which it cannot deliver at all (device motion also needs the magnetometer in the north
    /// frames: its stream says so).
    package let requiredSensors: Set<SensorType>
    /// The sensor whose samples its decimator counts, so whose offered rates decide whether a requested rate is
    /// exact or thinned (`OfferedRateNotes`); nil for event streams, whose rate caps how often a changing value
    /// goes out.
    package let pacingSensor: SensorType?
    /// A raw sensor stream: the sensor's samples as they come, without estimation.
    package let isRawSensor: Bool
    /// Publishes one message per sample, so it can pack samples into batches (`batch`, `encoding`).
    package let batches: Bool
    /// Keys of `streams.<name>` beyond the common ones (`enabled`, `rate_hz`, `qos`, `retain`, `durable`,
    /// `expiry_s`, and `batch` and `encoding` when it batches).
    package let extraSettings: [String]
    package let homeAssistant: [HomeAssistantSensor]

    /// The stream's own topic.
    package var primary: Topic { topics[0] }

    /// The keys of `streams.<name>`, in the order config.yaml lists them.
    package var settingKeys: [String] {
        ["enabled", "rate_hz", "qos", "retain", "durable", "expiry_s"] + (batches ? ["batch", "encoding"] : [])
            + extraSettings
    }

    /// The descriptor of `name`.
    package static func of(_ name: StreamName) -> StreamDescriptor { byName[name]! }

    /// The topic of `payload`.
    package static func topic(of payload: PayloadKind) -> Topic { topicsByPayload[payload]! }

    /// Every stream topic, streams in table order, each stream's own topic first.
    package static let allTopics: [Topic] = table.flatMap(\.topics)

    static let topicsByPayload: [PayloadKind: Topic] = Dictionary(
        uniqueKeysWithValues: allTopics.map { ($0.payload, $0) }
    )

    private static let byName: [StreamName: StreamDescriptor] = Dictionary(
        uniqueKeysWithValues: table.map { ($0.name, $0) }
    )
}
