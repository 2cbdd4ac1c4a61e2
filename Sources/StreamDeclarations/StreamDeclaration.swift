/// One stream, declared once: its name, topics, defaults, sensors, settings, Home Assistant entities and, for each
/// topic, its payload's fields (`PayloadDeclaration`). Everything else about a stream is derived from this by
/// `scripts/codegen/streams/generate.sh` (StreamCodegen): the stream table and names the agent runs on
/// (AgentPorts), the JSON codecs and decoders (MotionWire), the Sparkplug metrics and their writer (SparkplugB,
/// AgentPipeline), docs/schemas, the field tables of docs/payloads.md, config.yaml's `streams` section, the Python
/// client's constants and the shipped ACL and bridge lines. StreamCodegenTests fails when a generated file is stale.
///
/// Plain data on purpose: this module depends on nothing, so the generator builds in seconds and the declarations
/// cannot lean on what they generate.
package struct StreamDeclaration: Sendable {
    /// Config key, topic and command argument: `device-motion`.
    package var name: String
    /// The `StreamName` case: `deviceMotion`.
    package var swiftName: String
    /// One line for the `StreamName` case's documentation.
    package var summary: String
    /// The stream's own topic first, then the ones it derives (they share its settings).
    package var topics: [TopicDeclaration]
    package var defaults: Defaults
    package var requiredSensors: [Sensor]
    /// The sensor whose samples its decimator counts; nil for event streams, whose rate caps how often a changing
    /// value goes out.
    package var pacingSensor: Sensor?
    /// A raw sensor stream: the sensor's samples as they come, without estimation.
    package var isRawSensor: Bool
    /// Publishes one message per sample, so it can pack samples into batches (`batch`, `encoding`).
    package var batches: Bool
    /// Keys of `streams.<name>` beyond the common ones, each with its config.yaml documentation. Their values are
    /// read and checked by AgentConfig's `ConfigurationSchema` (a test checks every key has its field there).
    package var extraSettings: [SettingDeclaration]
    package var homeAssistant: [HomeAssistantEntity]
    /// The comment above `streams.<name>` in config.yaml (without `## `); the defaults line follows it.
    package var configDoc: [String]
    /// What the defaults line adds after the defaults (`xArbitraryZVertical`, `a new subscriber sees …`).
    package var defaultsNote: String?
    /// The `status` document's schema for this stream's entry (`status.schema.json#/$defs/<name>`).
    package var statusSchema: String

    /// The AgentPipeline type that runs the stream, by convention: `RawSensorStream` for a raw sensor, else the
    /// Swift name's type (`deviceMotion` → `DeviceMotionStream`). It builds itself from the catalog
    /// (`CatalogStream.make`), and the generated `StreamCatalog.make` calls it: a stream type that is missing or
    /// cannot build itself does not compile.
    package var streamType: String {
        isRawSensor ? "RawSensorStream" : swiftName.prefix(1).uppercased() + swiftName.dropFirst() + "Stream"
    }

    package init(
        name: String,
        swiftName: String,
        summary: String,
        topics: [TopicDeclaration],
        defaults: Defaults,
        requiredSensors: [Sensor],
        pacingSensor: Sensor?,
        isRawSensor: Bool = false,
        batches: Bool = false,
        extraSettings: [SettingDeclaration] = [],
        homeAssistant: [HomeAssistantEntity] = [],
        configDoc: [String],
        defaultsNote: String? = nil,
        statusSchema: String = "streamState"
    ) {
        self.name = name
        self.swiftName = swiftName
        self.summary = summary
        self.topics = topics
        self.defaults = defaults
        self.requiredSensors = requiredSensors
        self.pacingSensor = pacingSensor
        self.isRawSensor = isRawSensor
        self.batches = batches
        self.extraSettings = extraSettings
        self.homeAssistant = homeAssistant
        self.configDoc = configDoc
        self.defaultsNote = defaultsNote
        self.statusSchema = statusSchema
    }

    /// The physical sensors (`SensorType`'s cases).
    package enum Sensor: String, Sendable, Comparable {
        case accelerometer
        case gyroscope
        case magnetometer
        case barometer

        package static func < (a: Sensor, b: Sensor) -> Bool { a.rawValue < b.rawValue }
    }

    /// The settings a stream has when config.yaml says nothing (`StreamSettings`).
    package struct Defaults: Sendable {
        package var enabled: Bool
        package var rateHz: Double
        package var qos: Int
        package var retain: Bool
        package var durable: Bool

        package init(enabled: Bool, rateHz: Double, qos: Int, retain: Bool, durable: Bool = false) {
            self.enabled = enabled
            self.rateHz = rateHz
            self.qos = qos
            self.retain = retain
            self.durable = durable
        }
    }

    /// The keys of `streams.<name>`, in the order config.yaml lists them.
    package var settingKeys: [String] {
        ["enabled", "rate_hz", "qos", "retain", "durable", "expiry_s"] + (batches ? ["batch", "encoding"] : [])
            + extraSettings.map(\.key)
    }
}

/// A key of `streams.<name>` that only this stream has.
package struct SettingDeclaration: Sendable {
    package var key: String
    /// Its value in the shipped config.yaml, as written there.
    package var shipped: String
    /// Its comment in config.yaml (without `## `): what it does, its default and what is allowed.
    package var doc: [String]

    package init(_ key: String, shipped: String, doc: [String]) {
        self.key = key
        self.shipped = shipped
        self.doc = doc
    }
}

/// One Home Assistant entity that reads a stream topic (MQTT discovery).
package struct HomeAssistantEntity: Sendable {
    /// `sensor` or `event`.
    package var component: String
    /// Unique within the device: `steps`, `acceleration_x`.
    package var objectID: String
    package var name: String
    /// Which of the stream's topics it reads (an index into `topics`; 0 is the stream's own).
    package var topic: Int
    /// Jinja, reading `value_json`.
    package var template: String
    package var unit: String?
    package var deviceClass: String?
    package var stateClass: String?
    package var options: [String]?
    package var icon: String?
    /// The event entity's `event_types`.
    package var eventTypes: [String]?

    package init(
        component: String = "sensor",
        objectID: String,
        name: String,
        topic: Int = 0,
        template: String,
        unit: String? = nil,
        deviceClass: String? = nil,
        stateClass: String? = nil,
        options: [String]? = nil,
        icon: String? = nil,
        eventTypes: [String]? = nil
    ) {
        self.component = component
        self.objectID = objectID
        self.name = name
        self.topic = topic
        self.template = template
        self.unit = unit
        self.deviceClass = deviceClass
        self.stateClass = stateClass
        self.options = options
        self.icon = icon
        self.eventTypes = eventTypes
    }
}

/// One topic a stream publishes, under the device's root, and its payload.
package struct TopicDeclaration: Sendable {
    /// Its levels after the root: the stream's name for its own topic, more levels for one it derives.
    package var path: String
    /// The `PayloadKind` case: `pedometerEvents`.
    package var kind: String
    /// The Core Motion type its payload mirrors.
    package var coreMotion: String
    /// docs/payloads.md's topic table: retained or not, in words.
    package var retained: String
    /// docs/payloads.md's topic table: what it carries, in a phrase.
    package var what: String
    /// The JSON Schema's description of the payload.
    package var description: String
    /// The description of `seq` when it differs from the common one (a derived topic's own counter).
    package var seqDescription: String?
    package var payload: PayloadDeclaration

    package init(
        path: String,
        kind: String,
        coreMotion: String,
        retained: String = "per stream",
        what: String,
        description: String,
        seqDescription: String? = nil,
        payload: PayloadDeclaration
    ) {
        self.path = path
        self.kind = kind
        self.coreMotion = coreMotion
        self.retained = retained
        self.what = what
        self.description = description
        self.seqDescription = seqDescription
        self.payload = payload
    }

    /// Its JSON Schema in docs/schemas: `pedometer/events` → `pedometer-events.schema.json`.
    package var schemaFile: String {
        path.split(separator: "/").joined(separator: "-") + ".schema.json"
    }
}
