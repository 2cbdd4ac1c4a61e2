/// The retained status (`AgentStatus`) and the configuration account (`ConfigurationStatus`) written straight
/// into a `JSONBuffer`: every birth, command and desired document republishes the status, and Foundation's
/// `JSONEncoder` spent most of that (its containers, boxing, a dictionary per object). The document is the one
/// `JSONEncoder` with `.sortedKeys` writes — keys in order, absent optionals left out, numbers in the shortest
/// form that reads back to the same `Double` — and `JSONDecoder` reads it back to an equal value.
public enum StatusJSON {
    /// A number JSON cannot carry (NaN, ±infinity): `JSONEncoder` refuses them too.
    public struct NonFiniteNumber: Error, CustomStringConvertible {
        public let key: StaticString
        public var description: String { "\(key) is not a finite number: JSON cannot carry it" }
    }

    public static func encode(_ status: AgentStatus) throws -> [UInt8] {
        var buffer = JSONBuffer(capacity: 4096)
        try write(status, into: &buffer)
        return buffer.bytes
    }

    public static func encode(_ configuration: ConfigurationStatus) throws -> [UInt8] {
        var buffer = JSONBuffer(capacity: 8192)
        try write(configuration, into: &buffer)
        return buffer.bytes
    }

    public static func write(_ status: AgentStatus, into out: inout JSONBuffer) throws {
        var object = ObjectWriter()
        out.byte(UInt8(ascii: "{"))
        object.key("agentVersion", &out)
        out.string(status.agentVersion)
        object.key("bootCount", &out)
        out.unsigned(status.bootCount)
        if let broker = status.broker {
            object.key("broker", &out)
            write(broker, into: &out)
        }
        if let clockSynchronized = status.clockSynchronized {
            object.key("clockSynchronized", &out)
            out.bool(clockSynchronized)
        }
        if let configuration = status.configuration {
            object.key("configuration", &out)
            try write(configuration, into: &out)
        }
        object.key("device", &out)
        out.string(status.device)
        if let devices = status.devices {
            object.key("devices", &out)
            out.byte(UInt8(ascii: "["))
            for (index, device) in devices.enumerated() {
                if index > 0 { out.byte(UInt8(ascii: ",")) }
                try write(device, into: &out)
            }
            out.byte(UInt8(ascii: "]"))
        }
        if let outbox = status.outbox {
            object.key("outbox", &out)
            write(outbox, into: &out)
        }
        if let reason = status.reason {
            object.key("reason", &out)
            out.string(reason)
        }
        object.key("schemaVersion", &out)
        out.integer(status.schemaVersion)
        if let sensors = status.sensors {
            object.key("sensors", &out)
            write(sensors, into: &out)
        }
        if let source = status.source {
            object.key("source", &out)
            out.string(source)
        }
        object.key("state", &out)
        out.string(status.state.rawValue)
        if let streams = status.streams {
            object.key("streams", &out)
            out.byte(UInt8(ascii: "{"))
            for (index, entry) in streams.sorted(by: { $0.key < $1.key }).enumerated() {
                if index > 0 { out.byte(UInt8(ascii: ",")) }
                out.string(entry.key)
                out.byte(UInt8(ascii: ":"))
                try write(entry.value, into: &out)
            }
            out.byte(UInt8(ascii: "}"))
        }
        object.key("time", &out)
        try number(status.time, "time", &out)
        out.byte(UInt8(ascii: "}"))
    }

    public static func write(_ configuration: ConfigurationStatus, into out: inout JSONBuffer) throws {
        var object = ObjectWriter()
        out.byte(UInt8(ascii: "{"))
        if let bootCount = configuration.bootCount {
            object.key("bootCount", &out)
            out.unsigned(bootCount)
        }
        object.key("desired", &out)
        versions(configuration.desired, &out)
        if let device = configuration.device {
            object.key("device", &out)
            out.string(device)
        }
        object.key("groups", &out)
        strings(configuration.groups, &out)
        if let ignored = configuration.ignored {
            object.key("ignored", &out)
            try write(ignored, into: &out)
        }
        if let refused = configuration.refused {
            object.key("refused", &out)
            try write(refused, into: &out)
        }
        object.key("settings", &out)
        settings(configuration.settings, &out)
        if let time = configuration.time {
            object.key("time", &out)
            try number(time, "time", &out)
        }
        out.byte(UInt8(ascii: "}"))
    }

    private static func write(_ summary: ConfigurationSummary, into out: inout JSONBuffer) throws {
        var object = ObjectWriter()
        out.byte(UInt8(ascii: "{"))
        object.key("desired", &out)
        versions(summary.desired, &out)
        object.key("groups", &out)
        strings(summary.groups, &out)
        if let ignored = summary.ignored {
            object.key("ignored", &out)
            try write(ignored, into: &out)
        }
        if let notes = summary.notes {
            object.key("notes", &out)
            out.byte(UInt8(ascii: "{"))
            for (index, entry) in notes.sorted(by: { $0.key < $1.key }).enumerated() {
                if index > 0 { out.byte(UInt8(ascii: ",")) }
                out.string(entry.key)
                out.byte(UInt8(ascii: ":"))
                out.string(entry.value)
            }
            out.byte(UInt8(ascii: "}"))
        }
        if let overrides = summary.overrides {
            object.key("overrides", &out)
            settings(overrides, &out)
        }
        if let refused = summary.refused {
            object.key("refused", &out)
            try write(refused, into: &out)
        }
        out.byte(UInt8(ascii: "}"))
    }

    private static func write(_ refusal: ConfigurationStatus.Refusal, into out: inout JSONBuffer) throws {
        out.raw("{\"layer\":")
        out.string(refusal.layer)
        out.raw(",\"reason\":")
        out.string(refusal.reason)
        out.raw(",\"time\":")
        try number(refusal.time, "time", &out)
        if let version = refusal.version {
            out.raw(",\"version\":")
            out.integer(version)
        }
        out.byte(UInt8(ascii: "}"))
    }

    private static func write(_ setting: ConfigurationStatus.Setting, into out: inout JSONBuffer) {
        if let note = setting.note {
            out.raw("{\"note\":")
            out.string(note)
            out.raw(",\"source\":")
        } else {
            out.raw("{\"source\":")
        }
        out.string(setting.source)
        out.raw(",\"value\":")
        out.string(setting.value)
        out.byte(UInt8(ascii: "}"))
    }

    private static func write(_ stream: AgentStatus.Stream, into out: inout JSONBuffer) throws {
        out.raw("{\"available\":")
        out.bool(stream.available)
        out.raw(",\"batch\":")
        out.integer(stream.batch)
        out.raw(",\"enabled\":")
        out.bool(stream.enabled)
        out.raw(",\"encoding\":")
        out.string(stream.encoding)
        if let error = stream.error {
            out.raw(",\"error\":")
            out.string(error)
        }
        out.raw(",\"qos\":")
        out.integer(stream.qos)
        out.raw(",\"rateHz\":")
        try number(stream.rateHz, "rateHz", &out)
        if let reference = stream.referenceAttitude {
            out.raw(",\"referenceAttitude\":{\"quaternion\":{\"w\":")
            try number(reference.quaternion.w, "w", &out)
            out.raw(",\"x\":")
            try number(reference.quaternion.x, "x", &out)
            out.raw(",\"y\":")
            try number(reference.quaternion.y, "y", &out)
            out.raw(",\"z\":")
            try number(reference.quaternion.z, "z", &out)
            out.raw("},\"time\":")
            try number(reference.time, "time", &out)
            out.byte(UInt8(ascii: "}"))
        }
        if let frame = stream.referenceFrame {
            out.raw(",\"referenceFrame\":")
            out.string(frame)
        }
        out.raw(",\"requestedRateHz\":")
        try number(stream.requestedRateHz, "requestedRateHz", &out)
        out.raw(",\"retain\":")
        out.bool(stream.retain)
        out.byte(UInt8(ascii: "}"))
    }

    private static func write(_ device: AgentStatus.Device, into out: inout JSONBuffer) throws {
        out.raw("{\"activeSensors\":")
        strings(device.activeSensors, &out)
        if let error = device.error {
            out.raw(",\"error\":")
            out.string(error)
        }
        out.raw(",\"id\":")
        out.string(device.id)
        out.raw(",\"name\":")
        out.string(device.name)
        out.raw(",\"rateHz\":")
        try number(device.rateHz, "rateHz", &out)
        out.raw(",\"sensors\":")
        strings(device.sensors, &out)
        out.raw(",\"supportedRatesHz\":")
        out.string(device.supportedRatesHz)
        out.byte(UInt8(ascii: "}"))
    }

    private static func write(_ a: AgentStatus.Availability, into out: inout JSONBuffer) {
        out.raw("{\"availableAttitudeReferenceFrames\":")
        strings(a.availableAttitudeReferenceFrames, &out)
        out.raw(",\"isAbsoluteAltitudeAvailable\":")
        out.bool(a.isAbsoluteAltitudeAvailable)
        out.raw(",\"isAccelerometerAvailable\":")
        out.bool(a.isAccelerometerAvailable)
        out.raw(",\"isActivityAvailable\":")
        out.bool(a.isActivityAvailable)
        out.raw(",\"isBarometerAvailable\":")
        out.bool(a.isBarometerAvailable)
        out.raw(",\"isCadenceAvailable\":")
        out.bool(a.isCadenceAvailable)
        out.raw(",\"isDeviceMotionAvailable\":")
        out.bool(a.isDeviceMotionAvailable)
        out.raw(",\"isDistanceAvailable\":")
        out.bool(a.isDistanceAvailable)
        out.raw(",\"isFloorCountingAvailable\":")
        out.bool(a.isFloorCountingAvailable)
        out.raw(",\"isGyroAvailable\":")
        out.bool(a.isGyroAvailable)
        out.raw(",\"isLocationConfigured\":")
        out.bool(a.isLocationConfigured)
        out.raw(",\"isMagnetometerAvailable\":")
        out.bool(a.isMagnetometerAvailable)
        out.raw(",\"isPaceAvailable\":")
        out.bool(a.isPaceAvailable)
        out.raw(",\"isPedometerEventTrackingAvailable\":")
        out.bool(a.isPedometerEventTrackingAvailable)
        out.raw(",\"isRelativeAltitudeAvailable\":")
        out.bool(a.isRelativeAltitudeAvailable)
        out.raw(",\"isStepCountingAvailable\":")
        out.bool(a.isStepCountingAvailable)
        out.raw(",\"isSubmersionAvailable\":")
        out.bool(a.isSubmersionAvailable)
        out.byte(UInt8(ascii: "}"))
    }

    private static func write(_ outbox: OutboxStatus, into out: inout JSONBuffer) {
        var object = ObjectWriter()
        out.byte(UInt8(ascii: "{"))
        object.key("bytes", &out)
        out.integer(outbox.bytes)
        object.key("depth", &out)
        out.integer(outbox.depth)
        object.key("droppedExpired", outbox.droppedExpired, &out)
        object.key("droppedOverflow", &out)
        out.unsigned(outbox.droppedOverflow)
        object.key("durableAcknowledged", outbox.durableAcknowledged, &out)
        object.key("durableAppended", outbox.durableAppended, &out)
        object.key("durableBacklog", outbox.durableBacklog, &out)
        object.key("durableBytes", outbox.durableBytes, &out)
        object.key("durableDepth", outbox.durableDepth, &out)
        object.key("durableDropped", outbox.durableDropped, &out)
        object.key("durableDroppedNoSpace", outbox.durableDroppedNoSpace, &out)
        object.key("durableExpired", outbox.durableExpired, &out)
        object.key("durablePublished", outbox.durablePublished, &out)
        object.key("durableRejected", outbox.durableRejected, &out)
        object.key("durableSegments", outbox.durableSegments, &out)
        if let problem = outbox.durableStorageProblem {
            object.key("durableStorageProblem", &out)
            out.string(problem)
        }
        object.key("enqueued", &out)
        out.unsigned(outbox.enqueued)
        object.key("failed", &out)
        out.unsigned(outbox.failed)
        object.key("published", &out)
        out.unsigned(outbox.published)
        object.key("rejected", &out)
        out.unsigned(outbox.rejected)
        out.byte(UInt8(ascii: "}"))
    }

    private static func write(_ broker: BrokerLink, into out: inout JSONBuffer) {
        out.raw("{\"failovers\":")
        out.integer(broker.failovers)
        out.raw(",\"protocol\":")
        out.string(broker.protocol)
        out.raw(",\"server\":")
        out.string(broker.server)
        out.byte(UInt8(ascii: "}"))
    }

    private static func versions(_ desired: [String: Int], _ out: inout JSONBuffer) {
        out.byte(UInt8(ascii: "{"))
        for (index, entry) in desired.sorted(by: { $0.key < $1.key }).enumerated() {
            if index > 0 { out.byte(UInt8(ascii: ",")) }
            out.string(entry.key)
            out.byte(UInt8(ascii: ":"))
            out.integer(entry.value)
        }
        out.byte(UInt8(ascii: "}"))
    }

    private static func settings(_ settings: [String: ConfigurationStatus.Setting], _ out: inout JSONBuffer) {
        out.byte(UInt8(ascii: "{"))
        for (index, entry) in settings.sorted(by: { $0.key < $1.key }).enumerated() {
            if index > 0 { out.byte(UInt8(ascii: ",")) }
            out.string(entry.key)
            out.byte(UInt8(ascii: ":"))
            write(entry.value, into: &out)
        }
        out.byte(UInt8(ascii: "}"))
    }

    private static func strings(_ values: [String], _ out: inout JSONBuffer) {
        out.byte(UInt8(ascii: "["))
        for (index, value) in values.enumerated() {
            if index > 0 { out.byte(UInt8(ascii: ",")) }
            out.string(value)
        }
        out.byte(UInt8(ascii: "]"))
    }

    /// A `Double` as `JSONEncoder` writes it: integral values without `.0`, others in Swift's shortest
    /// round-tripping form (`0.1`, `1e-05`, `1.5e+20`), all of which JSON accepts.
    static func number(_ value: Double, _ key: StaticString, _ out: inout JSONBuffer) throws {
        guard value.isFinite else { throw NonFiniteNumber(key: key) }
        if value == value.rounded(.towardZero), abs(value) < 1e15 {
            if value.sign == .minus && value == 0 { out.byte(UInt8(ascii: "-")) }
            out.integer(Int(value))
            return
        }
        var text = value.description
        text.withUTF8 { out.append(UnsafeRawBufferPointer($0)) }
    }

    /// Writes the commas between an object's members, whichever optional ones are present.
    private struct ObjectWriter {
        private var first = true

        mutating func key(_ name: StaticString, _ out: inout JSONBuffer) {
            if first {
                first = false
                out.byte(UInt8(ascii: "\""))
            } else {
                out.raw(",\"")
            }
            out.raw(name)
            out.raw("\":")
        }

        mutating func key(_ name: StaticString, _ value: UInt64?, _ out: inout JSONBuffer) {
            guard let value else { return }
            key(name, &out)
            out.unsigned(value)
        }

        mutating func key(_ name: StaticString, _ value: Int?, _ out: inout JSONBuffer) {
            guard let value else { return }
            key(name, &out)
            out.integer(value)
        }
    }
}
