import AgentConfig
import AgentPorts
import ArgumentParser
import Foundation

/// Broker connection options shared by the operator commands (`ctl`, `sub`, `watch`, `fleet`).
struct BrokerOptions: ParsableArguments {
    @Option(help: "Broker host.") var host = "127.0.0.1"
    @Option(help: "Broker port.") var port = 1883
    @Option(
        name: .customLong("server"),
        help: ArgumentHelp(
            "A broker node, host:port; repeat it for every node of a cluster (replaces --host and --port).",
            discussion:
                "`fleet` commands publish desired documents to every node given and read every node: on a cluster whose nodes keep retained messages apart (RabbitMQ) name them all. Other commands use the first."
        )
    )
    var servers: [String] = []
    @Option(help: "MQTT protocol: v5 or v311.") var `protocol`: MQTTProtocolVersion = .v5
    @Option(help: "Username.") var username: String?
    @Option(help: "A file whose first line is the password (or set MOTION_AGENT_MQTT_PASSWORD).")
    var passwordFile: String?
    @Option(help: "CA certificate file (enables TLS).") var cafile: String?
    @Option(help: "Client certificate file.") var cert: String?
    @Option(help: "Client key file.") var key: String?
    @Option(help: "The agents' topic root template (topics.root).") var root = "motion/{device}"

    /// The nodes to reach: every `--server`, or `--host`:`--port`.
    func endpoints() throws -> [MQTTEndpoint] {
        guard !servers.isEmpty else { return [MQTTEndpoint(host: host, port: port)] }
        var seen = Set<MQTTEndpoint>()
        return try servers.compactMap { text in
            guard let endpoint = MQTTEndpoint(parsing: text, defaultPort: port) else {
                throw ValidationError("--server \(text) is not host:port (e.g. --server broker-a:1883)")
            }
            return seen.insert(endpoint).inserted ? endpoint : nil
        }
    }

    /// The options of a connection to the first node (`--server` or `--host`/`--port`).
    func connectOptions(clientID: String) throws -> BrokerConnectOptions {
        try connectOptions(clientID: clientID, to: endpoints()[0])
    }

    /// The options of a connection to `endpoint`, with this command's credentials and TLS.
    func connectOptions(clientID: String, to endpoint: MQTTEndpoint) throws -> BrokerConnectOptions {
        var password: String?
        if let file = passwordFile {
            guard let text = try? String(contentsOfFile: file, encoding: .utf8) else {
                throw ValidationError("cannot read --password-file \(file): check the path and its permissions")
            }
            password = text.split(separator: "\n", omittingEmptySubsequences: false).first.map(String.init)
        } else {
            password = Self.environmentPassword(ProcessInfo.processInfo.environment)
        }
        let tls = (cafile != nil || cert != nil) ? BrokerTLS(caFile: cafile, certFile: cert, keyFile: key) : nil
        return BrokerConnectOptions(
            host: endpoint.host,
            port: endpoint.port,
            clientID: clientID,
            protocolVersion: `protocol`,
            keepaliveSeconds: 30,
            cleanSession: true,
            username: username,
            password: password,
            tls: tls
        )
    }

    /// The device's topics under the `--root` template.
    func topics(device: String) -> TopicScheme {
        TopicScheme(template: root, device: device)
    }

    /// The password variable `run` reads too; the older name of `ctl` and `sub` still works, with a warning.
    static func environmentPassword(_ environment: [String: String]) -> String? {
        if let password = environment[passwordVariable] { return password }
        guard let old = environment[deprecatedPasswordVariable] else { return nil }
        printError("\(deprecatedPasswordVariable) is deprecated and will be removed: set \(passwordVariable) instead")
        return old
    }

    static let passwordVariable = "MOTION_AGENT_MQTT_PASSWORD"
    static let deprecatedPasswordVariable = "MOTION_AGENT_PASSWORD"
}

extension MQTTProtocolVersion: ExpressibleByArgument {}

/// Waits for the client's CONNACK, or throws the reason it failed.
func awaitConnection(_ client: BrokerClient, timeout: Double) async throws {
    let result = await withTaskGroup(of: String?.self) { group in
        group.addTask {
            for await event in client.events {
                switch event {
                case .connected: return nil
                case .connectFailed(_, let reason, _): return reason
                case .disconnected(let reason, _): return reason
                default: continue
                }
            }
            return "the connection closed"
        }
        group.addTask {
            try? await Task.sleep(for: .seconds(timeout))
            return "no answer from the broker within \(Int(timeout)) s"
        }
        let first = await group.next() ?? nil
        group.cancelAll()
        return first
    }
    if let reason = result { throw ValidationError("cannot connect: \(reason)") }
}
