import StreamDeclarations

/// The regions of hand-written files that list streams or fields: docs/payloads.md's topic table and field
/// tables, config.yaml's `streams` section, the Python client's constants, and the shipped ACLs and bridge.
enum DocsCodegen {
    /// The topics a device publishes besides its streams', after them (TopicScheme.Subject; a test holds the
    /// shipped ACLs to it).
    static let otherPublished = ["status", "configuration", "metrics", "control/reply"]

    static var outputs: [GeneratedOutput] {
        var outputs: [GeneratedOutput] = [.region("docs/payloads.md", "stream topics", topicRows)]
        for (_, topic) in StreamDeclaration.allTopics {
            outputs.append(.region("docs/payloads.md", "fields \(topic.path)", fieldTable(topic)))
        }
        outputs += [
            .region("docs/control.md", "stream names", streamNames),
            .region("config.yaml", "streams", configSection),
            .region("clients/python/motion_agent_client/decoder.py", "streams", python),
            .region("Deploy/mosquitto/acl", "device topics", acl),
            .region("Deploy/mosquitto-bridge/edge.acl", "device topics", acl),
            .region("Deploy/mosquitto-bridge/edge.conf", "device topics", bridge),
        ]
        return outputs
    }

    // MARK: docs/payloads.md

    static var topicRows: String {
        (["| topic | retained | what |", "|---|---|---|"]
            + ["| `{root}/status` | yes, QoS 1 | the agent's state: birth (`online`), will and goodbye (`offline`) |"]
            + StreamDeclaration.allTopics.map { _, topic in
                "| `{root}/\(topic.path)` | \(topic.retained) | \(topic.what) |"
            } + [
                "| `{root}/metrics` | no, QoS 0 | the agent's health every `metrics.interval_s` |",
                "| `{root}/control`, `{root}/control/reply` | no | commands and their replies: [control.md](control.md) |",
                "| `{root}/desired` | yes (operators publish it) | the device layer's desired state: [fleet.md](fleet.md) |",
            ]).joined(separator: "\n")
    }

    static func fieldTable(_ topic: TopicDeclaration) -> String {
        var rows = ["| field | type | unit | Core Motion | meaning |", "|---|---|---|---|---|"]
        func add(_ fields: [FieldDeclaration], path: String, note: String = "") {
            for f in fields {
                let name = path + f.name
                let unit = f.kind.isDate ? "Unix s" : (f.unit ?? "")
                let coreMotion = f.coreMotion.map { "`\($0)`" } ?? "—"
                rows.append("| `\(name)` | \(type(f)) | \(unit) | \(coreMotion) | \(note)\(f.doc) |")
                if case .group(let children, _, _) = f.kind { add(children, path: name + ".") }
            }
        }
        switch topic.payload.shape {
        case .fields(let fields):
            add(fields, path: "")
        case .variants(let discriminator, let variants):
            rows.append(
                "| `\(discriminator.name)` | \(variants.map { "`\($0.name)`" }.joined(separator: " \\| ")) | | — | "
                    + "\(discriminator.doc) |"
            )
            for variant in variants { add(variant.fields, path: "", note: "*\(variant.name)*: ") }
        }
        return rows.joined(separator: "\n")
    }

    static func type(_ f: FieldDeclaration) -> String {
        var text: String
        switch f.kind {
        case .number(let d): text = "number, \(d) decimals"
        case .integer: text = "integer"
        case .bool: text = "boolean"
        case .date: text = "number, 3 decimals"
        case .choice(_, let values, _): text = values.map { "`\($0)`" }.joined(separator: " \\| ")
        case .vector(let d): text = "{x, y, z}, \(d) decimals"
        case .quaternion(let d): text = "{x, y, z, w}, \(d) decimals"
        case .rotationMatrix(let d): text = "{m11 … m33}, \(d) decimals"
        case .group: text = "object"
        }
        switch f.presence {
        case .always: break
        case .nullable: text += ", or null"
        case .optional: text += ", optional"
        case .optionalInSchema: break
        }
        if let sentinel = f.constraints.sentinel { text += ", or \(JSONText.number(sentinel).inline)" }
        return text
    }

    // MARK: config.yaml

    static var configSection: String {
        var lines = ["streams:"]
        for (index, stream) in StreamDeclaration.table.enumerated() {
            if index > 0 { lines.append("") }
            let d = stream.defaults
            var defaults = [
                d.enabled ? "enabled" : "disabled", "\(SwiftSource.number(d.rateHz)) Hz", "QoS \(d.qos)",
                d.retain ? "retained" : "not retained",
            ]
            if d.durable { defaults.append("durable") }
            var last = "Default: " + defaults.joined(separator: ", ")
            if let note = stream.defaultsNote { last += ", \(note)" }
            last += "."
            for line in stream.configDoc { lines.append("  ## " + line) }
            lines.append("  ## " + last)
            lines.append("  \(stream.name):")
            lines += [
                "    enabled: \(d.enabled)", "    rate_hz: \(SwiftSource.number(d.rateHz))", "    qos: \(d.qos)",
                "    retain: \(d.retain)", "    durable: \(d.durable)", "    expiry_s:",
            ]
            if stream.batches {
                lines += [
                    "    ## Samples per message: 1 sends each sample on its own; N packs N samples into one message",
                    "    ## (Core Motion's batched sensor data), for high rates. Default: 1. Allowed: 1–1000.",
                    "    batch: 1",
                    "    ## How batches are encoded: json ({\"batch\": [...]}) or binary (the compact little-endian layout",
                    "    ## in docs/payloads.md). Single samples are always JSON. Default: json. Allowed: json, binary.",
                    "    encoding: json",
                ]
            }
            for setting in stream.extraSettings {
                for line in setting.doc { lines.append("    ## " + line) }
                lines.append("    \(setting.key): \(setting.shipped)")
            }
        }
        return lines.joined(separator: "\n")
    }

    // MARK: docs/control.md

    /// The names the commands take, in the table's order.
    static var streamNames: String {
        let names = StreamDeclaration.table.map { "`\($0.name)`" }.joined(separator: ", ")
        return SwiftSource.wrap("Streams: \(names).", width: 117).joined(separator: "\n")
    }

    // MARK: clients/python

    static var python: String {
        func tuple(_ name: String, _ doc: String, _ values: [String]) -> [String] {
            SwiftSource.wrap(doc, width: 117).map { "#: " + $0 } + ["\(name) = ("] + values.map { "    \"\($0)\"," }
                + [")"]
        }
        let topics = StreamDeclaration.allTopics.map(\.topic)
        let kinds =
            ["control/reply"] + topics.filter { $0.path.contains("/") }.map(\.path)
            + topics.filter { !$0.path.contains("/") }.map(\.path) + ["status", "configuration", "metrics", "control"]
        var lines: [String] = []
        lines += tuple(
            "STREAMS",
            "Every stream, in the agent's order (config keys, status entries).",
            StreamDeclaration.table.map(\.name)
        )
        lines.append("")
        lines += tuple(
            "SAMPLE_STREAMS",
            "The streams that publish one message per sample and can batch (binary batches among them).",
            StreamDeclaration.table.filter(\.batches).map(\.name)
        )
        lines.append("")
        lines += tuple(
            "TOPIC_KINDS",
            "Every kind of topic the agent publishes or reads, as the part after `{root}/` (multi-level ones first, "
                + "so the longest suffix wins). \"control\" is also what the group and fleet command topics are.",
            kinds
        )
        lines.append("")
        lines.append("#: Each stream topic's JSON Schema in docs/schemas.")
        lines.append("STREAM_SCHEMAS = {")
        for topic in topics { lines.append("    \"\(topic.path)\": \"\(topic.schemaFile)\",") }
        lines.append("}")
        return lines.joined(separator: "\n")
    }

    // MARK: Deploy

    static var published: [String] { StreamDeclaration.allTopics.map(\.topic.path) + otherPublished }

    static var acl: String {
        published.map { "pattern write motion/%u/\($0)" }.joined(separator: "\n")
    }

    static var bridge: String {
        published.map { "topic motion/+/\($0) out 1" }.joined(separator: "\n")
    }
}

extension FieldDeclaration.Kind {
    var isDate: Bool {
        if case .date = self { return true }
        return false
    }
}
