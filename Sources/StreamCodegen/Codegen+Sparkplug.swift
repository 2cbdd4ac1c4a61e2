import StreamDeclarations

/// Sparkplug's view of the declarations: each stream a device whose metrics are its topics' fields, flattened to
/// `/`-separated paths (`attitude/roll`, `events/type` for a derived topic's), and the writers that fill their
/// slots from MotionModel's values — numbers and the enums' literal names only, no allocation.
enum SparkplugCodegen {
    /// One metric and how a writer sets it.
    struct Metric {
        var name: String
        var type: String
        var unit: String?
        var description: String
        /// The value's expression (a `SparkplugMetricValue`).
        var value: String
    }

    /// A stretch of a writer: metrics always set, or an optional value's metrics (null when it is nil).
    enum Part {
        case metric(Metric)
        case optional(binding: String, value: String, [Part])
    }

    static var outputs: [GeneratedOutput] {
        [
            .file("Sources/SparkplugB/Motion/MotionSparkplug+Catalog.swift", catalog),
            .file("Sources/SparkplugB/Motion/SparkplugDeviceWriter+Motion.swift", writer),
            .file("Sources/AgentPipeline/Sparkplug/SparkplugLane+Payloads.swift", lane),
        ]
    }

    /// The metrics of `topic`, in slot order.
    static func parts(_ stream: StreamDeclaration, _ topic: TopicDeclaration) -> [Part] {
        let prefix = topic.path == stream.name ? "" : String(topic.path.dropFirst(stream.name.count + 1)) + "/"
        let floats = topic.payload.sparkplugFloats
        switch topic.payload.shape {
        case .fields(let fields):
            return parts(fields, prefix: prefix, base: "v", floats: floats)
        case .variants(let discriminator, let variants):
            return [
                .metric(
                    Metric(
                        name: prefix + discriminator.name,
                        type: "string",
                        description: discriminator.doc,
                        value: ""  // set per case by the writer
                    )
                )
            ]
                + variants.flatMap { parts($0.fields, prefix: prefix + $0.name + "/", base: "e", floats: floats) }
        }
    }

    static func parts(_ fields: [FieldDeclaration], prefix: String, base: String, floats: Bool) -> [Part] {
        var out: [Part] = []
        for f in fields where f.sparkplug {
            let e = MotionWireCodegen.access(base, f.swift)
            let name = prefix + f.name
            let unit = f.unit.map { $0 == "°" ? "deg" : $0 }
            func metric(_ name: String, _ type: String, _ value: String) -> Part {
                .metric(Metric(name: name, type: type, unit: unit, description: f.doc, value: value))
            }
            let nullable = f.presence == .nullable
            switch f.kind {
            case .number:
                let v =
                    floats
                    ? (nullable ? "\(e).map { .float(Float($0)) } ?? .null" : ".float(Float(\(e)))")
                    : (nullable ? "\(e).map(SparkplugMetricValue.double) ?? .null" : ".double(\(e))")
                out.append(metric(name, floats ? "float" : "double", v))
            case .integer:
                out.append(
                    metric(name, "int64", nullable ? "\(e).map { .int64(Int64($0)) } ?? .null" : ".int64(Int64(\(e)))")
                )
            case .bool:
                out.append(metric(name, "boolean", ".boolean(\(e))"))
            case .date:
                let ms = "MotionSparkplug.milliseconds"
                out.append(
                    metric(
                        name,
                        "dateTime",
                        nullable ? "\(e).map { .dateTime(\(ms)($0)) } ?? .null" : ".dateTime(\(ms)(\(e)))"
                    )
                )
            case .choice:
                out.append(
                    metric(
                        name,
                        "string",
                        nullable ? "\(e).map { .string($0.rawValue) } ?? .null" : ".string(\(e).rawValue)"
                    )
                )
            case .vector:
                for axis in ["x", "y", "z"] {
                    out.append(metric(name + "/" + axis, floats ? "float" : "double", number("\(e).\(axis)", floats)))
                }
            case .quaternion:
                for axis in ["x", "y", "z", "w"] {
                    out.append(metric(name + "/" + axis, floats ? "float" : "double", number("\(e).\(axis)", floats)))
                }
            case .rotationMatrix:
                continue
            case .group(let children, let type, _):
                if type != nil, f.presence == .optional {
                    let binding = "g"
                    out.append(
                        .optional(
                            binding: binding,
                            value: e,
                            parts(children, prefix: name + "/", base: binding, floats: floats)
                        )
                    )
                } else {
                    out += parts(children, prefix: name + "/", base: type == nil ? base : e, floats: floats)
                }
            }
        }
        return out
    }

    static func number(_ e: String, _ floats: Bool) -> String { floats ? ".float(Float(\(e)))" : ".double(\(e))" }

    static func flatten(_ parts: [Part]) -> [Metric] {
        parts.flatMap { part -> [Metric] in
            switch part {
            case .metric(let m): [m]
            case .optional(_, _, let inner): flatten(inner)
            }
        }
    }

    /// The Swift name of a stream's metric list: `deviceMotion`.
    static func listName(_ stream: StreamDeclaration) -> String { stream.swiftName }

    static var catalog: String {
        var s = SwiftSource()
        s.line(SwiftSource.banner)
        s.line()
        s.block("extension MotionSparkplug {") { s in
            s.doc("The streams Sparkplug can carry, in catalog order (the agent's stream names).")
            s.expression(
                .array(StreamDeclaration.table.map { .string($0.name) }),
                prefix: "package static let streams = "
            )
            s.line()
            s.doc("A stream's data metrics: its topics' fields, in slot order; nil for a name that is not a stream.")
            s.block("static func dataMetrics(of stream: String) -> [SparkplugMetricDefinition]? {") { s in
                s.switchBlock("switch stream {") { s in
                    for stream in StreamDeclaration.table {
                        s.line("case \(SwiftSource.literal(stream.name)): \(listName(stream))")
                    }
                    s.line("default: nil")
                }
            }
            for stream in StreamDeclaration.table {
                s.line()
                let metrics = stream.topics.flatMap { flatten(parts(stream, $0)) }
                s.expression(
                    .array(
                        metrics.map { m in
                            var arguments: [(label: String?, value: SwiftExpression)] = [
                                (nil, .string(m.name)), (nil, .atom("." + m.type)),
                            ]
                            if let unit = m.unit { arguments.append(("unit", .string(unit))) }
                            arguments.append(("description", .string(m.description)))
                            return .call("SparkplugMetricDefinition", arguments)
                        }
                    ),
                    prefix: "static let \(listName(stream)): [SparkplugMetricDefinition] = "
                )
            }
        }
        return s.text
    }

    static var writer: String {
        var s = SwiftSource()
        s.line(SwiftSource.banner)
        s.line()
        s.line("import MotionModel")
        s.line()
        s.doc(
            "MotionModel's values into the slots `MotionSparkplug` declares for each stream, in the same order. "
                + "Explicit slots, numbers and the enums' literal names only: nothing here allocates."
        )
        s.block("extension SparkplugDeviceWriter {") { s in
            var firstFunction = true
            for stream in StreamDeclaration.table {
                var slot = 0
                for topic in stream.topics {
                    let parts = parts(stream, topic)
                    let count = flatten(parts).count
                    if !firstFunction { s.line() }
                    firstFunction = false
                    s.doc("`{root}/\(topic.path)`: metrics \(slot)–\(slot + count - 1) of the \(stream.name) device.")
                    let payload = topic.payload
                    s.block(
                        "package mutating func record(\(payload.swiftCase) v: \(payload.swiftType), timeMs t: UInt64) {"
                    ) { s in
                        switch payload.shape {
                        case .fields:
                            emit(parts, slot: &slot, into: &s)
                        case .variants(_, let variants):
                            let kindSlot = slot
                            slot += 1
                            var variantSlot = slot
                            s.switchBlock("switch v {") { s in
                                for variant in variants {
                                    s.line("case .\(variant.name)(let e):")
                                    s.indented { s in
                                        s.line("set(\(kindSlot), .string(\"\(variant.name)\"), timestampMs: t)")
                                        let variantParts = self.parts(
                                            variant.fields,
                                            prefix: "",
                                            base: "e",
                                            floats: payload.sparkplugFloats
                                        )
                                        emit(variantParts, slot: &variantSlot, into: &s)
                                    }
                                }
                            }
                            slot = variantSlot
                        }
                    }
                }
            }
        }
        return s.text
    }

    static func emit(_ parts: [Part], slot: inout Int, into s: inout SwiftSource) {
        for part in parts {
            switch part {
            case .metric(let m):
                s.expression(
                    .call("set", [(nil, .atom("\(slot)")), (nil, .atom(m.value)), ("timestampMs", .atom("t"))])
                )
                slot += 1
            case .optional(let binding, let value, let inner):
                let first = slot
                let count = flatten(inner).count
                s.block("if let \(binding) = \(value) {") { s in emit(inner, slot: &slot, into: &s) }
                s.lines[s.lines.count - 1] += " else {"
                s.indented { s in
                    s.line("for slot in \(first)...\(first + count - 1) { set(slot, .null, timestampMs: t) }")
                }
                s.line("}")
            }
        }
    }

    static var lane: String {
        let topics = StreamDeclaration.allTopics.map(\.topic)
        var s = SwiftSource()
        s.line(SwiftSource.banner)
        s.line()
        s.line("import MotionWire")
        s.line("import SparkplugB")
        s.line()
        s.block("extension SparkplugLane {") { s in
            s.doc("Records `payload` into its stream's device writer (`SparkplugDeviceWriter+Motion`).")
            s.line("@inline(__always)")
            s.block(
                "package static func record(_ payload: StreamPayload, into writer: inout SparkplugDeviceWriter, timeMs t: UInt64) {"
            ) { s in
                s.switchBlock("switch payload {") { s in
                    for topic in topics {
                        let c = topic.payload.swiftCase
                        s.line("case .\(c)(let v): writer.record(\(c): v, timeMs: t)")
                    }
                }
            }
            s.line()
            s.doc("`payload.kind`'s index in `PayloadKind.allCases`.")
            s.line("@inline(__always)")
            s.block("static func kindIndex(_ payload: StreamPayload) -> Int {") { s in
                s.switchBlock("switch payload {") { s in
                    for (index, topic) in topics.enumerated() { s.line("case .\(topic.payload.swiftCase): \(index)") }
                }
            }
        }
        return s.text
    }
}
