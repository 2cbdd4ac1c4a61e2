import AgentCore
import AgentPorts
import ArgumentParser
import Foundation
import Logging
import MosquittoTransport

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
        let root = broker.rootTopic(device: device)
        let client = MosquittoClient(logger: Logger(label: "motion-agent.sub"))
        try client.connect(
            try broker.connectOptions(clientID: "motion-sub-\(UUID().uuidString.prefix(8).lowercased())")
        )
        try await awaitConnection(client, timeout: 10)
        let filters = streams.isEmpty ? [root + "/#"] : streams.map { root + "/" + $0 }
        try client.subscribe(filters, qos: 0)
        var seen = 0
        for await event in client.events {
            guard case .message(let m) = event else { continue }
            let name = m.topic.hasPrefix(root + "/") ? String(m.topic.dropFirst(root.count + 1)) : m.topic
            print("\(name)\t\(Self.describe(m.payload))")
            seen += 1
            if let count, seen >= count { break }
        }
        await client.disconnect(flushTimeout: 1)
    }

    /// `seq=12 t=5123.456 acceleration=(0.012, -0.003, -0.999)` — nested objects of x/y/z become triples.
    static func describe(_ payload: [UInt8]) -> String {
        guard let object = try? JSONSerialization.jsonObject(with: Data(payload)) as? [String: Any] else {
            return String(decoding: payload, as: UTF8.self)
        }
        return object.keys.sorted { a, b in
            let order = ["seq", "timestamp", "time"]
            return (order.firstIndex(of: a) ?? 99, a) < (order.firstIndex(of: b) ?? 99, b)
        }.map { key in "\(key)=\(format(object[key]!))" }.joined(separator: " ")
    }

    private static func format(_ value: Any) -> String {
        if let d = value as? [String: Any], let x = d["x"] as? Double, let y = d["y"] as? Double,
            let z = d["z"] as? Double, d.count == 3
        {
            return String(format: "(%.4f, %.4f, %.4f)", x, y, z)
        }
        if let data = try? JSONSerialization.data(withJSONObject: value, options: [.sortedKeys, .fragmentsAllowed]) {
            return String(decoding: data, as: UTF8.self)
        }
        return "\(value)"
    }
}
