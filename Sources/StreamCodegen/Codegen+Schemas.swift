import StreamDeclarations

/// docs/schemas: one JSON Schema per stream topic, the shared definitions (common.schema.json) and the index's
/// rows (README.md). The end-to-end tests validate the real agent's payloads against these files.
enum SchemasCodegen {
    static let directory = "docs/schemas/"
    static let base = "https://motion-agent.invalid/schemas/v1/"

    static var outputs: [GeneratedOutput] {
        StreamDeclaration.allTopics.map { stream, topic in
            .file(directory + topic.schemaFile, schema(stream, topic).document)
        } + [
            .file(directory + "common.schema.json", common.document),
            .region(directory + "README.md", "stream topics", index),
        ]
    }

    static var index: String {
        let streams = StreamDeclaration.allTopics.map { stream, topic in
            let shape = stream.batches ? " — one sample or a JSON batch" : ""
            return "| `{root}/\(topic.path)` | [\(topic.schemaFile)](\(topic.schemaFile)) | `\(topic.coreMotion)`: "
                + "\(topic.what)\(shape) |"
        }
        return
            (["| topic (under `topics.root`, default `motion/{device}`) | schema | what |", "|---|---|---|"] + streams
            + otherRows).joined(separator: "\n")
    }

    /// The index's rows for what is not a stream topic.
    static let otherRows = [
        "| `{root}/status` | [status.schema.json](status.schema.json) | birth (`online`), will (`offline`, `connection "
            + "lost`), goodbye (`offline`, `shutdown`) |",
        "| `{root}/configuration` | [configuration.schema.json](configuration.schema.json) | every runtime setting's "
            + "value and source (retained; published at each connection and when it changes) |",
        "| `{root}/metrics` | [metrics.schema.json](metrics.schema.json) | the agent's health |",
        "| `{root}/control`, `motion/group/<name>/control`, `control.fleet_topic` | "
            + "[control-request.schema.json](control-request.schema.json) | a command, or a signed envelope around one |",
        "| `{root}/control/reply`, or the command's MQTT 5 Response Topic | "
            + "[control-reply.schema.json](control-reply.schema.json) | the answer to a command |",
        "| — | [common.schema.json](common.schema.json) | shared definitions (`seq`, `timestamp`, `time`, vectors, "
            + "enumerations, stream names); not a payload |",
    ]

    static func schema(_ stream: StreamDeclaration, _ topic: TopicDeclaration) -> JSONText {
        var members: [(String, JSONText)] = [
            ("$schema", .string("https://json-schema.org/draft/2020-12/schema")),
            ("$id", .string(base + topic.schemaFile)),
            ("title", .string("{root}/\(topic.path) — \(topic.coreMotion)")),
            ("description", .string(topic.description)),
        ]
        let sample = self.sample(topic)
        guard stream.batches, case .object(let sampleMembers) = sample else {
            if case .object(let sampleMembers) = sample { members += sampleMembers }
            return .object(members)
        }
        members.append(
            (
                "oneOf",
                .array([.object([("$ref", .string("#/$defs/sample"))]), .object([("$ref", .string("#/$defs/batch"))])])
            )
        )
        let batchDescription =
            "streams.\(stream.name).batch > 1 with encoding json: up to `batch` samples in one message, oldest first, "
            + "each exactly the unbatched payload; their seq values follow one another. A partial batch (fewer "
            + "samples) is published when the setting changes and at shutdown, so no sample is lost."
        members.append(
            (
                "$defs",
                .object([
                    (
                        "sample",
                        .object(
                            [
                                (
                                    "description",
                                    .string(
                                        "One sample, as published on its own when streams.\(stream.name).batch is 1 "
                                            + "(the default); also each element of a JSON batch."
                                    )
                                )
                            ] + sampleMembers
                        )
                    ),
                    (
                        "batch",
                        .object([
                            ("description", .string(batchDescription)),
                            ("type", .string("object")),
                            (
                                "properties",
                                .object([
                                    (
                                        "batch",
                                        .object([
                                            ("type", .string("array")),
                                            ("items", .object([("$ref", .string("#/$defs/sample"))])),
                                            ("minItems", .number(1)), ("maxItems", .number(1000)),
                                        ])
                                    )
                                ])
                            ),
                            ("required", .array([.string("batch")])),
                            ("additionalProperties", .bool(false)),
                        ])
                    ),
                ])
            )
        )
        return .object(members)
    }

    /// The envelope's fields, as every stream message starts.
    static func envelope(_ topic: TopicDeclaration) -> [(String, JSONText)] {
        var seq: [(String, JSONText)] = [("$ref", .string("common.schema.json#/$defs/seq"))]
        if let text = topic.seqDescription { seq.append(("description", .string(text))) }
        return [
            ("seq", .object(seq)),
            ("timestamp", .object([("$ref", .string("common.schema.json#/$defs/timestamp"))])),
            ("time", .object([("$ref", .string("common.schema.json#/$defs/time"))])),
            ("clockSynchronized", .object([("$ref", .string("common.schema.json#/$defs/clockSynchronized"))])),
        ]
    }

    static let envelopeRequired: [JSONText] = [.string("seq"), .string("timestamp"), .string("time")]

    /// One message's object (a sample of a batching stream).
    static func sample(_ topic: TopicDeclaration) -> JSONText {
        switch topic.payload.shape {
        case .fields(let fields):
            var members: [(String, JSONText)] = [
                ("type", .string("object")),
                ("properties", .object(envelope(topic) + fields.map { ($0.name, property($0)) })),
                ("required", .array(envelopeRequired + required(fields))),
                ("additionalProperties", .bool(false)),
            ]
            for rule in topic.payload.schemaRules { members.append((rule.key, .raw(rule.json))) }
            return .object(members)
        case .variants(let discriminator, let variants):
            let kind = JSONText.object([
                ("enum", .array(variants.map { .string($0.name) })),
                ("description", .string(discriminator.doc)),
            ])
            return .object([
                ("type", .string("object")),
                ("properties", .object(envelope(topic) + [(discriminator.name, kind)])),
                ("required", .array(envelopeRequired + [.string(discriminator.name)])),
                (
                    "oneOf",
                    .array(
                        variants.map { variant in
                            .object([
                                ("description", .string(variant.doc)),
                                (
                                    "properties",
                                    .object(
                                        [(discriminator.name, .object([("const", .string(variant.name))]))]
                                            + variant.fields.map { ($0.name, property($0)) }
                                    )
                                ),
                                ("required", .array(required(variant.fields))),
                            ])
                        }
                    )
                ),
                ("unevaluatedProperties", .bool(false)),
            ])
        }
    }

    static func required(_ fields: [FieldDeclaration]) -> [JSONText] {
        fields.filter { $0.presence == .always || $0.presence == .nullable }.map { .string($0.name) }
    }

    /// `g, 6 decimals: …`: the unit and the precision the encoder writes, then the declaration's line.
    static func description(_ f: FieldDeclaration) -> String {
        var parts: [String] = []
        switch f.kind {
        case .date: parts = ["Unix s", "3 decimals"]
        case .number(let d), .vector(let d), .quaternion(let d), .rotationMatrix(let d):
            parts = (f.unit.map { [$0] } ?? []) + ["\(d) decimals"]
        default: parts = f.unit.map { [$0] } ?? []
        }
        guard !parts.isEmpty else { return f.doc }
        // "The last step…" reads on as "…: the last step…"; a name ("CMDeviceMotion…", "1-σ") stays.
        var doc = f.doc
        if let first = doc.first, first.isUppercase, let second = doc.dropFirst().first, second.isLowercase {
            doc = first.lowercased() + doc.dropFirst()
        }
        return parts.joined(separator: ", ") + ": " + doc
    }

    static func bounds(_ c: FieldDeclaration.Constraints) -> [(String, JSONText)] {
        var out: [(String, JSONText)] = []
        if let v = c.minimum { out.append(("minimum", .number(v))) }
        if let v = c.exclusiveMinimum { out.append(("exclusiveMinimum", .number(v))) }
        if let v = c.maximum { out.append(("maximum", .number(v))) }
        return out
    }

    static func property(_ f: FieldDeclaration) -> JSONText {
        let text = description(f)
        let nullable = f.presence == .nullable
        func typed(_ type: String) -> JSONText {
            if let sentinel = f.constraints.sentinel {
                return .object([
                    ("description", .string(text)),
                    (
                        "anyOf",
                        .array([
                            .object([("const", .number(sentinel))]),
                            .object([("type", .string(type))] + bounds(f.constraints)),
                        ])
                    ),
                ])
            }
            let typeText: JSONText = nullable ? .array([.string(type), .string("null")]) : .string(type)
            return .object([("type", typeText)] + bounds(f.constraints) + [("description", .string(text))])
        }
        func components(_ names: [String]) -> JSONText {
            .object([
                ("description", .string(text)),
                ("type", .string("object")),
                (
                    "properties",
                    .object(names.map { ($0, .object([("type", .string("number"))] + bounds(f.constraints))) })
                ),
                ("required", .array(names.map { .string($0) })),
                ("additionalProperties", .bool(false)),
            ])
        }
        switch f.kind {
        case .number: return typed("number")
        case .integer: return typed("integer")
        case .bool: return .object([("type", .string("boolean")), ("description", .string(text))])
        case .date:
            if nullable { return typed("number") }
            return .object([("$ref", .string("common.schema.json#/$defs/unixDate")), ("description", .string(text))])
        case .choice(_, let values, let shared):
            if let shared {
                return .object([
                    ("$ref", .string("common.schema.json#/$defs/\(shared)")), ("description", .string(text)),
                ])
            }
            let null: [JSONText] = nullable ? [.raw("null")] : []
            return .object([("enum", .array(values.map { .string($0) } + null)), ("description", .string(text))])
        case .vector:
            return .object([("$ref", .string("common.schema.json#/$defs/vector3")), ("description", .string(text))])
        case .quaternion: return components(["x", "y", "z", "w"])
        case .rotationMatrix: return components(["m11", "m12", "m13", "m21", "m22", "m23", "m31", "m32", "m33"])
        case .group(let children, _, _):
            return .object([
                ("description", .string(text)),
                ("type", .string("object")),
                ("properties", .object(children.map { ($0.name, property($0)) })),
                ("required", .array(required(children))),
                ("additionalProperties", .bool(false)),
            ])
        }
    }

    // MARK: common.schema.json

    /// The descriptions of the enumerations payloads share, by their name in common.schema.json.
    static let sharedChoices: [String: String] = [
        "referenceFrame":
            "Core Motion's CMAttitudeReferenceFrame. All four have z vertical (up): xArbitraryZVertical (gyroscope + "
            + "accelerometer, yaw 0 at start), xArbitraryCorrectedZVertical (the magnetometer removes yaw drift, yaw 0 "
            + "at start), xMagneticNorthZVertical (North-West-Up), xTrueNorthZVertical (magnetic north turned by the "
            + "World Magnetic Model's declination at `location`).",
        "magneticFieldAccuracy":
            "Core Motion's CMMagneticFieldCalibrationAccuracy, ordered uncalibrated < low < medium < high.",
        "activityConfidence": "Core Motion's CMMotionActivityConfidence.",
    ]

    static var common: JSONText {
        var choices: [(String, JSONText)] = []
        func visit(_ fields: [FieldDeclaration]) {
            for f in fields {
                switch f.kind {
                case .choice(_, let values, let shared?) where !choices.contains(where: { $0.0 == shared }):
                    choices.append(
                        (
                            shared,
                            .object([
                                ("description", .string(sharedChoices[shared] ?? f.doc)),
                                ("enum", .array(values.map { .string($0) })),
                            ])
                        )
                    )
                case .group(let children, _, _): visit(children)
                default: break
                }
            }
        }
        for (_, topic) in StreamDeclaration.allTopics {
            switch topic.payload.shape {
            case .fields(let fields): visit(fields)
            case .variants(_, let variants): for v in variants { visit(v.fields) }
            }
        }
        let streams = StreamDeclaration.table
        return .object([
            ("$schema", .string("https://json-schema.org/draft/2020-12/schema")),
            ("$id", .string(base + "common.schema.json")),
            ("title", .string("Definitions shared by MotionAgent's payload schemas")),
            (
                "description",
                .string(
                    "Not a payload of its own: the fields every stream message starts with (MessageEnvelope), the "
                        + "vector, the enumerations and the stream names the other schemas refer to. Generated from "
                        + "the stream declarations (Sources/StreamDeclarations) by scripts/codegen/streams/generate.sh."
                )
            ),
            (
                "$defs",
                .object(
                    [
                        (
                            "seq",
                            .object([
                                (
                                    "description",
                                    .string(
                                        "Rises by one per sample, per topic, from 1 at agent start (batched samples "
                                            + "keep counting, so a batch of N advances it by N); a gap means messages "
                                            + "were lost."
                                    )
                                ),
                                ("type", .string("integer")), ("minimum", .number(1)),
                            ])
                        ),
                        (
                            "timestamp",
                            .object([
                                (
                                    "description",
                                    .string(
                                        "Seconds on the sensor clock (Core Motion's CMLogItem.timestamp): monotonic, "
                                            + "arbitrary origin, written with 6 decimals (1 µs). Use it for intervals "
                                            + "and ordering."
                                    )
                                ),
                                ("type", .string("number")),
                            ])
                        ),
                        (
                            "time",
                            .object([
                                (
                                    "description",
                                    .string(
                                        "Wall-clock Unix time of the sample, seconds (the sensor timestamp mapped "
                                            + "through the system clock), written with 6 decimals."
                                    )
                                ),
                                ("type", .string("number")),
                            ])
                        ),
                        (
                            "unixDate",
                            .object([
                                (
                                    "description",
                                    .string("Wall-clock Unix time, seconds, written with 3 decimals (ms).")
                                ),
                                ("type", .string("number")),
                            ])
                        ),
                        (
                            "clockSynchronized",
                            .object([
                                (
                                    "description",
                                    .string(
                                        "Present, and then always false, only while the system clock is not "
                                            + "synchronized (no NTP/PTP yet): `time` and the other Unix times may be "
                                            + "far off, `timestamp` stays valid for intervals."
                                    )
                                ),
                                ("const", .bool(false)),
                            ])
                        ),
                        (
                            "vector3",
                            .object([
                                (
                                    "description",
                                    .string(
                                        "A vector in device axes (x to the right, y to the top of the device, z out of "
                                            + "the screen); the unit is given where it is used."
                                    )
                                ),
                                ("type", .string("object")),
                                (
                                    "properties",
                                    .object([
                                        ("x", .object([("type", .string("number"))])),
                                        ("y", .object([("type", .string("number"))])),
                                        ("z", .object([("type", .string("number"))])),
                                    ])
                                ),
                                ("required", .array([.string("x"), .string("y"), .string("z")])),
                                ("additionalProperties", .bool(false)),
                            ])
                        ),
                        (
                            "streamName",
                            .object([
                                (
                                    "description",
                                    .string(
                                        "A stream: its config key (streams.<name>), its topic ({root}/<name>) and its "
                                            + "name in control commands."
                                    )
                                ),
                                ("enum", .array(streams.map { .string($0.name) })),
                            ])
                        ),
                        (
                            "batchableStreamName",
                            .object([
                                (
                                    "description",
                                    .string(
                                        "The sample streams, which can pack several samples into one message "
                                            + "(streams.<name>.batch, the set-batch command)."
                                    )
                                ),
                                ("enum", .array(streams.filter(\.batches).map { .string($0.name) })),
                            ])
                        ),
                        (
                            "streamStates",
                            .object([
                                (
                                    "description",
                                    .string(
                                        "Every stream's state in the status document (`streams`), keyed by stream name."
                                    )
                                ),
                                ("type", .string("object")),
                                (
                                    "properties",
                                    .object(
                                        streams.map {
                                            (
                                                $0.name,
                                                .object([
                                                    ("$ref", .string("status.schema.json#/$defs/\($0.statusSchema)"))
                                                ])
                                            )
                                        }
                                    )
                                ),
                                ("required", .array(streams.map { .string($0.name) })),
                                ("additionalProperties", .bool(false)),
                            ])
                        ),
                        (
                            "encoding",
                            .object([
                                (
                                    "description",
                                    .string(
                                        "How batches (batch > 1) are encoded: json ({\"batch\": [sample, …]}) or binary "
                                            + "(the little-endian MAB layout, docs/payloads.md). Single samples are "
                                            + "always JSON."
                                    )
                                ),
                                ("enum", .array([.string("json"), .string("binary")])),
                            ])
                        ),
                    ] + choices
                )
            ),
        ])
    }
}
