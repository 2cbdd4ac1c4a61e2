import AgentPorts
import ArgumentParser
import Foundation
import Logging
import MosquittoTransport
import MotionModel
import MotionWire

/// `motion-agent sub DEVICE`: prints a device's streams, one decoded line per message.
struct SubscribeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sub",
        abstract: "Print a device's streams, decoded, one line per message."
    )

    @OptionGroup var broker: BrokerOptions
    @Option(name: .customLong("stream"), help: "Only these streams (repeatable); default all.") var streams: [String] =
        []
    @Option(help: "Stop after this many messages.") var count: Int?
    @Argument(help: "The device id (device.id).") var device: String

    func run() async throws {
        let topics = broker.topics(device: device)
        let client = MosquittoClient(logger: Logger(label: "motion-agent.sub"))
        try client.connect(
            try broker.connectOptions(clientID: "motion-sub-\(UUID().uuidString.prefix(8).lowercased())")
        )
        try await awaitConnection(client, timeout: 10)
        let filters = streams.isEmpty ? [topics.everything] : streams.map { topics.topic(path: $0) }
        try client.subscribe(filters, qos: 0)
        var seen = 0
        for await event in client.events {
            guard case .message(let m) = event else { continue }
            let name = topics.path(of: m.topic) ?? m.topic
            let kind = topics.subject(of: m.topic).flatMap(PayloadKind.init(subject:))
            // Device text goes through Printable: no escape sequence reaches the terminal.
            for line in Self.describe(m.payload, kind: kind) {
                print("\(Printable.text(name, limit: 200))\t\(Printable.text(line, limit: 1 << 20))")
            }
            seen += 1
            if let count, seen >= count { break }
        }
        await client.disconnect(flushTimeout: 1)
    }

    /// One line per sample of a stream message (a batch gives several), decoded by MotionWire:
    /// `seq=12 timestamp=5123.456789 time=1763700000.123456 acceleration=(0.0120, -0.0030, -0.9990)`. Status,
    /// metrics and control messages: their JSON keys, one line.
    static func describe(_ payload: [UInt8], kind: PayloadKind?) -> [String] {
        guard let kind else { return [describeJSON(payload)] }
        do {
            return try PayloadDecoder.decode(payload, kind: kind).map(describe)
        } catch {
            return ["undecodable (\(error.description)): " + String(decoding: payload.prefix(200), as: UTF8.self)]
        }
    }

    static func describe(_ message: WireMessage) -> String {
        let e = message.envelope
        var parts = ["seq=\(e.seq)", "timestamp=\(e.timestamp)", "time=\(e.time)"]
        if !e.clockSynchronized { parts.append("clockSynchronized=false") }
        let (label, value) = message.payload.labelledValue
        if let label {
            parts.append("\(label)=\(format(value))")
        } else {
            // The payload's own fields, in declaration order; its timestamp repeats the envelope's.
            parts += Mirror(reflecting: value).children.compactMap { child in
                guard let label = child.label, label != "timestamp" else { return nil }
                return "\(label)=\(format(child.value))"
            }
        }
        return parts.joined(separator: " ")
    }

    private static func format(_ value: Any) -> String {
        switch value {
        case let v as Vector3: return String(format: "(%.4f, %.4f, %.4f)", v.x, v.y, v.z)
        case let q as Quaternion: return String(format: "(x %.5f, y %.5f, z %.5f, w %.5f)", q.x, q.y, q.z, q.w)
        default:
            let mirror = Mirror(reflecting: value)
            if mirror.displayStyle == .optional { return mirror.children.first.map { format($0.value) } ?? "null" }
            return "\(value)"
        }
    }

    /// `key=value` for every key of a JSON object, `seq`, `timestamp` and `time` first.
    static func describeJSON(_ payload: [UInt8]) -> String {
        guard let object = try? JSONSerialization.jsonObject(with: Data(payload)) as? [String: Any] else {
            return String(decoding: payload, as: UTF8.self)
        }
        return object.keys.sorted { a, b in
            let order = ["seq", "timestamp", "time"]
            return (order.firstIndex(of: a) ?? 99, a) < (order.firstIndex(of: b) ?? 99, b)
        }.map { key in "\(key)=\(formatJSON(object[key]!))" }.joined(separator: " ")
    }

    private static func formatJSON(_ value: Any) -> String {
        if let data = try? JSONSerialization.data(withJSONObject: value, options: [.sortedKeys, .fragmentsAllowed]) {
            return String(decoding: data, as: UTF8.self)
        }
        return "\(value)"
    }
}
