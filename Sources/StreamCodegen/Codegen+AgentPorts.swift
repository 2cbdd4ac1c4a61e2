import StreamDeclarations

/// AgentPorts' view of the declarations: the stream and payload names and the stream table the agent runs on.
enum AgentPortsCodegen {
    static let directory = "Sources/AgentPorts/Streams/"

    static var outputs: [GeneratedOutput] {
        [
            .file(directory + "StreamName.swift", streamName),
            .file(directory + "PayloadKind.swift", payloadKind),
            .file(directory + "StreamDescriptor+Table.swift", table),
        ]
    }

    static var streamName: String {
        var s = SwiftSource()
        s.line(SwiftSource.banner)
        s.line()
        s.doc(
            "A stream has one name everywhere: config key, topic, control command. What else there is to know about a "
                + "stream — its topics, payloads, defaults, sensors, schema, Home Assistant entities — is its "
                + "`descriptor` (StreamName+Descriptor.swift)."
        )
        s.block("package enum StreamName: String, Sendable, Hashable, CaseIterable, Codable, Comparable {") { s in
            for stream in StreamDeclaration.table {
                s.doc(stream.summary)
                s.line(
                    stream.swiftName == stream.name
                        ? "case \(stream.name)" : "case \(stream.swiftName) = \"\(stream.name)\""
                )
            }
        }
        return s.text
    }

    static var payloadKind: String {
        var s = SwiftSource()
        s.line(SwiftSource.banner)
        s.line()
        s.doc(
            "The shape of a stream topic's payload (docs/payloads.md): the identity of one codec in MotionWire "
                + "(`Payloads/Codecs/`, chosen by `StreamPayload`). Which stream publishes which payload on which topic "
                + "is the stream descriptor's to say (`StreamDescriptor.topics`); everything here derives from it "
                + "(PayloadKind+Topic.swift)."
        )
        s.block("public enum PayloadKind: String, Sendable, Hashable, CaseIterable {") { s in
            for (_, topic) in StreamDeclaration.allTopics {
                s.doc("`{root}/\(topic.path)`: \(topic.coreMotion).")
                s.line("case \(topic.kind)")
            }
        }
        return s.text
    }

    static var table: String {
        var s = SwiftSource()
        s.line(SwiftSource.banner)
        s.line()
        s.line("import MotionModel")
        s.line()
        s.block("extension StreamDescriptor {") { s in
            s.doc("Every stream, in the order config.yaml, the status and the docs list them.")
            s.expression(
                .array(StreamDeclaration.table.map(descriptor)),
                prefix: "package static let table: [StreamDescriptor] = "
            )
        }
        return s.text
    }

    static func descriptor(_ stream: StreamDeclaration) -> SwiftExpression {
        let d = stream.defaults
        var defaults: [(label: String?, value: SwiftExpression)] = [
            ("enabled", .atom("\(d.enabled)")), ("rateHz", .atom(SwiftSource.number(d.rateHz))),
            ("qos", .atom("\(d.qos)")), ("retain", .atom("\(d.retain)")),
        ]
        if d.durable { defaults.append(("durable", .atom("true"))) }
        return .call(
            "StreamDescriptor",
            [
                ("name", .atom("." + stream.swiftName)),
                ("topics", .array(stream.topics.map { topic(stream, $0) })),
                ("defaults", .call("StreamSettings", defaults)),
                ("requiredSensors", .array(stream.requiredSensors.map { .atom("." + $0.rawValue) })),
                ("pacingSensor", .atom(stream.pacingSensor.map { "." + $0.rawValue } ?? "nil")),
                ("isRawSensor", .atom("\(stream.isRawSensor)")),
                ("batches", .atom("\(stream.batches)")),
                ("extraSettings", .array(stream.extraSettings.map { .string($0.key) })),
                ("homeAssistant", .array(stream.homeAssistant.map(homeAssistant))),
            ]
        )
    }

    static func topic(_ stream: StreamDeclaration, _ topic: TopicDeclaration) -> SwiftExpression {
        .call(
            "Topic",
            [
                ("stream", .atom("." + stream.swiftName)),
                ("path", .string(topic.path)),
                ("payload", .atom("." + topic.kind)),
                ("schema", .string(topic.schemaFile)),
                ("coreMotion", .string(topic.coreMotion)),
            ]
        )
    }

    static func homeAssistant(_ entity: HomeAssistantEntity) -> SwiftExpression {
        var arguments: [(label: String?, value: SwiftExpression)] = []
        if entity.component != "sensor" { arguments.append(("component", .string(entity.component))) }
        arguments += [
            ("objectID", .string(entity.objectID)),
            ("name", .string(entity.name)),
            ("topic", .atom("\(entity.topic)")),
            ("template", .string(entity.template)),
        ]
        let optional: [(String, String?)] = [
            ("unit", entity.unit), ("deviceClass", entity.deviceClass), ("stateClass", entity.stateClass),
        ]
        for (label, value) in optional {
            if let value { arguments.append((label, .string(value))) }
        }
        if let options = entity.options {
            arguments.append(("options", .array(options.map { .string($0) })))
        }
        if let icon = entity.icon { arguments.append(("icon", .string(icon))) }
        if let types = entity.eventTypes {
            arguments.append(("eventTypes", .array(types.map { .string($0) })))
        }
        return .call("HomeAssistantSensor", arguments)
    }
}
