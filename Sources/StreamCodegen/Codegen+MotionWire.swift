import StreamDeclarations

/// MotionWire's view of the declarations: one codec per payload (its JSON writer, decoder and summary) and the
/// `StreamPayload` enum that dispatches to them. The writers are straight-line code, as they were by hand: no
/// allocation, no loop over fields, nothing looked up per sample (BENCHMARKS.md, "One declaration per stream").
enum MotionWireCodegen {
    static let directory = "Sources/MotionWire/Payloads/"

    static var outputs: [GeneratedOutput] {
        var outputs: [GeneratedOutput] = [.file(directory + "StreamPayload.swift", streamPayload)]
        for (_, topic) in StreamDeclaration.allTopics {
            outputs.append(.file(directory + "Codecs/\(topic.payload.codec).swift", codec(topic)))
        }
        return outputs
    }

    // MARK: StreamPayload

    static var streamPayload: String {
        let topics = StreamDeclaration.allTopics.map(\.topic)
        var s = SwiftSource()
        s.line(SwiftSource.banner)
        s.line()
        s.line("import AgentPorts")
        s.line("import MotionModel")
        s.line()
        s.doc(
            "What one stream message says, as Core Motion's types. Dates that the agent keeps on the sensor clock "
                + "(`startDate`, `endDate`, an event's `date`) are wall-clock Unix seconds here, as on the wire; the "
                + "values that carry their own `timestamp` (device motion, altitude, submersion) have the envelope's."
        )
        s.block("public enum StreamPayload: Sendable, Equatable {") { s in
            for topic in topics {
                s.doc("`{root}/\(topic.path)`: \(topic.coreMotion).")
                s.line("case \(topic.payload.swiftCase)(\(topic.payload.swiftType))")
            }
            s.line()
            s.doc("The kind of topic the payload is published on.")
            s.block("public var kind: PayloadKind {") { s in
                s.switchBlock("switch self {") { s in
                    for topic in topics { s.line("case .\(topic.payload.swiftCase): .\(topic.kind)") }
                }
            }
        }
        s.line()
        s.doc(
            "Each case's codec (`Codecs/`): the one place a payload is tied to its wire form. The switches are "
                + "exhaustive, so a payload cannot be declared without its codec."
        )
        s.block("extension StreamPayload {") { s in
            s.doc("The payload's JSON fields after the envelope (`PayloadEncoder`). Allocation-free.")
            s.line("@inline(__always)")
            s.block("func writeFields(into b: inout JSONBuffer) {") { s in
                s.switchBlock("switch self {") { s in
                    for topic in topics {
                        s.line("case .\(topic.payload.swiftCase)(let v): \(topic.payload.codec).write(v, into: &b)")
                    }
                }
            }
            s.line()
            s.doc("The payload of a JSON message on a topic of `kind` (`PayloadDecoder`).")
            s.line("static func read(")
            s.indented { s in
                s.line("_ kind: PayloadKind,")
                s.line("_ fields: PayloadFields,")
                s.line("timestamp t: Double")
            }
            s.line(") throws(WireDecodingError) -> StreamPayload {")
            s.indented { s in
                s.switchBlock("switch kind {") { s in
                    for topic in topics {
                        let read = ".\(topic.payload.swiftCase)(try \(topic.payload.codec).read(fields, timestamp: t))"
                        let call = "case .\(topic.kind): " + read
                        if call.count + 4 * s.depth <= 120 {
                            s.line(call)
                        } else {
                            s.line("case .\(topic.kind):")
                            s.indented { s in s.line(read) }
                        }
                    }
                }
            }
            s.line("}")
            s.line()
            s.doc("One line for a terminal (`watch`): `x=+0.0120 y=-0.0030 z=-0.9990  |a|=0.999 g`, `steps=12 …`.")
            s.block("public var summary: String {") { s in
                s.switchBlock("switch self {") { s in
                    for topic in topics {
                        s.line("case .\(topic.payload.swiftCase)(let v): \(topic.payload.codec).summary(v)")
                    }
                }
            }
            s.line()
            s.doc(
                "The payload's value for tools that print any payload field by field (`sub`): the Core Motion value, "
                    + "or for the raw sensors their vector under its JSON key."
            )
            s.block("public var labelledValue: (label: String?, value: any Sendable) {") { s in
                s.switchBlock("switch self {") { s in
                    for topic in topics {
                        let fields = topic.payload.fields
                        let label =
                            fields.count == 1 && fields[0].swift.isEmpty
                            ? SwiftSource.literal(fields[0].name) : "nil"
                        s.line("case .\(topic.payload.swiftCase)(let v): (\(label), v)")
                    }
                }
            }
        }
        return s.text
    }

    // MARK: Codec

    static func codec(_ topic: TopicDeclaration) -> String {
        let payload = topic.payload
        var s = SwiftSource()
        s.line(SwiftSource.banner)
        s.line()
        s.line("import Foundation")
        s.line("import MotionModel")
        s.line()
        s.doc("`{root}/\(topic.path)`: Core Motion's `\(topic.coreMotion)`.")
        s.block("enum \(payload.codec): PayloadCodec {") { s in
            s.block("static func write(_ v: \(payload.swiftType), into b: inout JSONBuffer) {") { s in
                var writer = JSONWriter()
                switch payload.shape {
                case .fields(let fields):
                    writer.fields(fields, base: "v", first: false)
                    writer.flush()
                    s.lines += writer.source.lines.map { $0.isEmpty ? $0 : "        " + $0 }
                case .variants(let discriminator, let variants):
                    s.switchBlock("switch v {") { s in
                        for variant in variants {
                            s.line("case .\(variant.name)(let e):")
                            var writer = JSONWriter()
                            writer.raw(",\"\(discriminator.name)\":\"\(variant.name)\"")
                            writer.fields(variant.fields, base: "e", first: false)
                            writer.flush()
                            s.lines += writer.source.lines.map { $0.isEmpty ? $0 : "            " + $0 }
                        }
                    }
                }
            }
            s.line()
            let signature =
                "static func read(_ o: PayloadFields, timestamp: Double) throws(WireDecodingError) -> \(payload.swiftType) {"
            s.block(signature) { s in
                switch payload.shape {
                case .fields(let fields):
                    reader(fields, type: payload.swiftType, initializer: payload.initializer, object: "o", into: &s)
                case .variants(let discriminator, let variants):
                    s.line("let \(discriminator.name) = try o.text(\"\(discriminator.name)\")")
                    s.switchBlock("switch \(discriminator.name) {") { s in
                        for variant in variants {
                            s.line("case \"\(variant.name)\":")
                            s.indented { s in
                                reader(
                                    variant.fields,
                                    type: variant.swiftType,
                                    initializer: variant.initializer,
                                    object: "o",
                                    into: &s,
                                    result: { ("return ", .call(".\(variant.name)", [(nil, $0)])) }
                                )
                            }
                        }
                        let names = variants.map(\.name).joined(separator: ", ")
                        s.line("default:")
                        s.indented { s in
                            s.line(
                                "throw WireDecodingError(\"`\(discriminator.name)` is \\\"\\(\(discriminator.name))\\\", not one of \(names)\")"
                            )
                        }
                    }
                }
            }
            s.line()
            let summary = payload.summary
            if summary.count == 1 {
                s.line("static func summary(_ v: \(payload.swiftType)) -> String { \(summary[0]) }")
                if s.lines[s.lines.count - 1].count > 120 {
                    s.lines.removeLast()
                    s.block("static func summary(_ v: \(payload.swiftType)) -> String {") { s in s.line(summary[0]) }
                }
            } else {
                s.block("static func summary(_ v: \(payload.swiftType)) -> String {") { s in
                    for line in summary { s.line(line) }
                }
            }
        }
        return s.text
    }

    /// The accessor `swift` relative to `base`.
    static func access(_ base: String, _ swift: String) -> String {
        swift.isEmpty ? base : base + "." + swift
    }

    /// Writes fields as raw fragments (merged) and value calls.
    struct JSONWriter {
        var source = SwiftSource()
        private var pending = ""
        var locals = 0

        mutating func raw(_ fragment: String) { pending += fragment }

        mutating func flush() {
            guard !pending.isEmpty else { return }
            source.line("b.raw(\(SwiftSource.literal(pending)))")
            pending = ""
        }

        mutating func code(_ line: String) {
            flush()
            source.line(line)
        }

        mutating func fields(_ fields: [FieldDeclaration], base: String, first: Bool) {
            for (index, field) in fields.enumerated() {
                self.field(field, base: base, first: first && index == 0)
            }
        }

        mutating func field(_ f: FieldDeclaration, base: String, first: Bool) {
            let key = (first ? "" : ",") + "\"\(f.name)\":"
            let value = access(base, f.swift)
            if f.presence == .optional {
                if case .group(let children, .some, _) = f.kind {
                    locals += 1
                    let name = "g\(locals)"
                    code("if let \(name) = \(value) {")
                    var inner = JSONWriter()
                    inner.locals = locals
                    inner.raw(key + "{")
                    inner.fields(children, base: name, first: true)
                    inner.raw("}")
                    inner.flush()
                    locals = inner.locals
                    source.lines += inner.source.lines.map { "    " + $0 }
                    source.line("}")
                } else {
                    locals += 1
                    let name = "x\(locals)"
                    code("if let \(name) = \(value) {")
                    var inner = JSONWriter()
                    inner.raw(key)
                    inner.value(f, expression: name, nullable: false)
                    inner.flush()
                    source.lines += inner.source.lines.map { "    " + $0 }
                    source.line("}")
                }
                return
            }
            raw(key)
            if case .group(let children, let type, _) = f.kind {
                raw("{")
                fields(children, base: type == nil ? base : value, first: true)
                raw("}")
                return
            }
            self.value(f, expression: value, nullable: f.presence == .nullable)
        }

        mutating func value(_ f: FieldDeclaration, expression e: String, nullable: Bool) {
            switch f.kind {
            case .number(let decimals):
                code(nullable ? "optional(\(e), decimals: \(decimals), &b)" : "b.number(\(e), decimals: \(decimals))")
            case .date:
                code(nullable ? "optional(\(e), decimals: 3, &b)" : "b.number(\(e), decimals: 3)")
            case .integer:
                code(nullable ? "optional(\(e), &b)" : "b.integer(\(e))")
            case .bool:
                code("b.bool(\(e))")
            case .choice(_, let values, _):
                flush()
                if nullable {
                    locals += 1
                    let name = "c\(locals)"
                    source.block("if let \(name) = \(e) {") { s in
                        s.switchBlock("switch \(name) {") { s in
                            for value in values {
                                s.line("case .\(value): b.raw(\(SwiftSource.literal("\"\(value)\"")))")
                            }
                        }
                    }
                    source.lines[source.lines.count - 1] += " else {"
                    source.indented { s in s.line("b.raw(\"null\")") }
                    source.line("}")
                } else {
                    source.switchBlock("switch \(e) {") { s in
                        for value in values { s.line("case .\(value): b.raw(\(SwiftSource.literal("\"\(value)\"")))") }
                    }
                }
            case .vector(let decimals):
                code("b.vector(\(e), decimals: \(decimals))")
            case .quaternion(let decimals):
                for (index, axis) in ["x", "y", "z", "w"].enumerated() {
                    raw((index == 0 ? "{" : ",") + "\"\(axis)\":")
                    code("b.number(\(e).\(axis), decimals: \(decimals))")
                }
                raw("}")
            case .rotationMatrix(let decimals):
                locals += 1
                let m = "r\(locals)"
                // Before the pending key: the raw fragments around it stay one write.
                source.line("let \(m) = RotationMatrix(\(e))")
                var index = 0
                for row in 1...3 {
                    for column in 1...3 {
                        raw((index == 0 ? "{" : ",") + "\"m\(row)\(column)\":")
                        code("b.number(\(m).m\(row)\(column), decimals: \(decimals))")
                        index += 1
                    }
                }
                raw("}")
            case .group:
                preconditionFailure("groups are written by field(_:base:first:)")
            }
        }
    }

    // MARK: Reader

    /// The statements that read a value of `type` from `object` (a `PayloadFields` expression) and end with
    /// `result` of the value (`return …` by default).
    static func reader(
        _ fields: [FieldDeclaration],
        type: String,
        initializer: [String]?,
        object: String,
        into s: inout SwiftSource,
        result: (SwiftExpression) -> (prefix: String, SwiftExpression) = { ("return ", $0) }
    ) {
        guard let initializer else {
            // A single field's value: the payload is that value.
            let (prefix, value) = result(.atom(readExpression(fields[0], object: object)))
            s.expression(value, prefix: prefix)
            return
        }
        // Untyped groups: their object, once.
        var leaves: [(field: FieldDeclaration, object: String)] = []
        func collect(_ fields: [FieldDeclaration], object: String) {
            for f in fields {
                if case .group(let children, nil, _) = f.kind {
                    let local = f.name + "Fields"
                    s.line("let \(local) = try \(object).object(\"\(f.name)\")")
                    collect(children, object: local)
                } else if !f.derived {
                    leaves.append((f, object))
                }
            }
        }
        collect(fields, object: object)
        var arguments: [(label: String?, value: SwiftExpression)] = []
        for label in initializer {
            if let leaf = leaves.first(where: { $0.field.swift == label }) {
                arguments.append((label, .atom(readExpression(leaf.field, object: leaf.object))))
            } else if label == "timestamp" {
                arguments.append((label, .atom("timestamp")))
            } else {
                preconditionFailure("\(type)'s initializer takes \(label), which no field declares")
            }
        }
        let after = leaves.filter { !initializer.contains($0.field.swift) }
        let construction = SwiftExpression.call(type, arguments)
        if after.isEmpty {
            let (prefix, value) = result(construction)
            s.expression(value, prefix: prefix)
            return
        }
        s.expression(construction, prefix: "var value = ")
        for leaf in after {
            guard case .group(let children, .some(let groupType), let groupInitializer) = leaf.field.kind else {
                s.line("value.\(leaf.field.swift) = \(readExpression(leaf.field, object: leaf.object))")
                continue
            }
            // An optional value of its own (`relativeAttitude`): read when present.
            s.block("if let g = try \(leaf.object).optionalObject(\"\(leaf.field.name)\") {") { s in
                reader(
                    children,
                    type: groupType,
                    initializer: groupInitializer,
                    object: "g",
                    into: &s,
                    result: { ("value.\(leaf.field.swift) = ", $0) }
                )
            }
        }
        let (prefix, value) = result(.atom("value"))
        s.expression(value, prefix: prefix)
    }

    /// How one field is read from `object`.
    static func readExpression(_ f: FieldDeclaration, object o: String) -> String {
        let k = SwiftSource.literal(f.name)
        switch (f.kind, f.presence) {
        case (.number, .nullable), (.date, .nullable): return "try \(o).optionalNumber(\(k))"
        case (.number, .optional), (.date, .optional): return "try \(o).numberIfPresent(\(k))"
        case (.number, .optionalInSchema(let absent)), (.date, .optionalInSchema(let absent)):
            return "try \(o).numberIfPresent(\(k)) ?? \(absent)"
        case (.number, _), (.date, _): return "try \(o).number(\(k))"
        case (.integer, .nullable): return "try \(o).optionalInteger(\(k))"
        case (.integer, _): return "try \(o).integer(\(k))"
        case (.bool, _): return "try \(o).bool(\(k))"
        case (.choice, .nullable): return "try \(o).optionalChoice(\(k))"
        case (.choice, _): return "try \(o).choice(\(k))"
        case (.vector, _): return "try \(o).vector(\(k))"
        case (.quaternion, _): return "try \(o).quaternion(\(k))"
        case (.rotationMatrix, _), (.group, _):
            preconditionFailure("\(f.name) is not read as one value")
        }
    }
}
