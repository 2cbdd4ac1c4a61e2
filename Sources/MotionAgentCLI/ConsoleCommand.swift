import AgentConfig
import AgentPorts
import ArgumentParser
import FleetConsole
import Foundation
import Logging
import MosquittoTransport

/// `motion-agent console`: the fleet and its devices live in a browser, and desired documents edited from it.
struct ConsoleCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "console",
        abstract: "Serve the fleet console: every device live in a browser, and the fleet's settings changed from it.",
        discussion: """
            Subscribes to the broker like `fleet` and `watch` and serves one page: the fleet from the retained \
            statuses, a device's attitude and streams live, and edits of the fleet's, a group's or a device's \
            desired document (signed with --signing-key when given; the key never leaves this process).

            Listens on 127.0.0.1:8080 unless --listen says otherwise. It prints its address with a token: \
            opening that address lets the browser change settings. On loopback, viewing needs no token; on any \
            other address every request needs it (--token-file keeps one across restarts) and so does TLS: \
            --tls-certificate and --tls-key make it serve HTTPS (or --plain-http on a trusted network; on \
            loopback, a TLS proxy or an SSH tunnel in front works too: Deploy/README.md).
            """
    )

    @OptionGroup var broker: BrokerOptions
    @OptionGroup var reading: FleetReadOptions
    @Option(help: "Where to listen, HOST:PORT (an IP address; [::1]:8080 for IPv6).") var listen = "127.0.0.1:8080"
    @Option(
        help:
            "A file whose first line is the console's token (at least 16 characters); without it a new one is made at every start."
    )
    var tokenFile: String?
    @Option(
        name: .customLong("host-name"),
        help:
            "A name the browser reaches the console by (its Host header), e.g. console.example or console.example:443 behind a proxy; repeatable."
    )
    var hostNames: [String] = []
    @Option(help: "Sign the documents the console publishes with this operator key (motion-agent keys generate).")
    var signingKey: String?
    @Option(
        help: "A trusted keys file: a retained document may be signed by any of its keys (besides --signing-key's)."
    )
    var trustedKeys: String?
    @Option(help: "Serve HTTPS with this PEM certificate chain (with --tls-key).") var tlsCertificate: String?
    @Option(help: "The PEM private key of --tls-certificate (unencrypted; readable by this user only).") var tlsKey:
        String?
    @Flag(
        name: .customLong("plain-http"),
        help:
            "Listen beyond loopback without TLS (a trusted network): every request still needs the token, but it travels in clear."
    )
    var plainHTTP = false
    @Option(help: "The fleet's desired topic.") var fleetTopic = TopicScheme.fleetDesired
    @Option(help: "Log level: trace, debug, info, notice, warning, error.") var logLevel = "info"

    func run() async throws {
        guard let address = ConsoleListenAddress(parsing: listen) else {
            throw ValidationError("--listen \(listen) is not IP:PORT (e.g. 127.0.0.1:8080, 0.0.0.0:8080, [::1]:8080)")
        }
        if !address.isLoopback, address.isWildcard, hostNames.isEmpty {
            throw ValidationError(
                "--listen \(listen) listens on every address: name how browsers reach it with --host-name NAME (the console refuses requests for any other host, against DNS rebinding)"
            )
        }
        guard (tlsCertificate == nil) == (tlsKey == nil) else {
            throw ValidationError("--tls-certificate and --tls-key go together: give both files, or neither")
        }
        let tls = try tlsCertificate.flatMap { certificate in
            try tlsKey.map { key in
                do {
                    return try ConsoleTLS(certificateFile: certificate, keyFile: key)
                } catch {
                    throw ValidationError("\(error)")
                }
            }
        }
        if !address.isLoopback, tls == nil, !plainHTTP {
            throw ValidationError(
                "--listen \(listen) is beyond loopback, where the token must not travel in clear: give --tls-certificate FILE --tls-key FILE (HTTPS), or listen on 127.0.0.1 behind a TLS proxy or an SSH tunnel, or say --plain-http for a trusted network"
            )
        }
        let token = try readToken()
        let signing = try signingKey.map { try OperatorKeyFile(path: $0).key }
        var trusted: TrustedKeyFile?
        if let trustedKeys {
            guard let data = FileManager.default.contents(atPath: trustedKeys),
                case .success(let file) = TrustedKeyFile.parse(String(decoding: data, as: UTF8.self))
            else { throw ValidationError("--trusted-keys \(trustedKeys) is not a readable trusted keys file") }
            trusted = file
        }
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = Logger.Level(rawValue: logLevel) ?? .info
            return handler
        }
        let logger = Logger(label: "motion-agent.console")
        let clientID = "motion-console-\(UUID().uuidString.prefix(8).lowercased())"
        let options = try broker.endpoints().enumerated().map {
            try broker.connectOptions(clientID: "\(clientID)-\($0.offset)", to: $0.element)
        }
        let consoleBroker = ConsoleBroker(options: options, root: broker.root, readQoS: reading.readQos, logger: logger)
        {
            // Room for every retained status of a large fleet arriving at once.
            MosquittoClient(logger: logger, eventBacklogLimit: 1 << 18)
        }
        let hub = try ConsoleHub(
            broker: consoleBroker,
            fleetTopic: fleetTopic,
            signingKey: signing,
            trustedKeys: trusted,
            logger: logger
        )
        let access = ConsoleAccess(
            token: token,
            loopback: address.isLoopback,
            hosts: address.hostHeaders(names: hostNames),
            tls: tls != nil
        )
        let server = ConsoleServer(hub: hub, access: access, address: address, logger: logger)
        let shown = address.isWildcard ? hostNames[0] : address.authority
        let link =
            "\(tls == nil ? "http" : "https")://\(shown.contains(":") && !shown.hasPrefix("[") ? shown : "\(shown):\(address.port)")/?token=\(token)"
        try await server.run(tls: tls) {
            print("motion-agent console: \(link)")
            print(
                address.isLoopback
                    ? "  (viewing needs no token on loopback; the token lets this browser change settings)"
                    : tls != nil
                        ? "  (every request needs the token; HTTPS)"
                        : "  (every request needs the token, in clear: --plain-http, for a trusted network only)"
            )
            fflush(nil)
        }
    }

    /// The token from --token-file, or a new random one (256 bits, URL-safe).
    private func readToken() throws -> String {
        guard let tokenFile else {
            var generator = SystemRandomNumberGenerator()
            let bytes = (0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) }
            return Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-")
                .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
        }
        guard let text = try? String(contentsOfFile: tokenFile, encoding: .utf8),
            let line = text.split(separator: "\n", omittingEmptySubsequences: false).first
        else { throw ValidationError("cannot read --token-file \(tokenFile): check the path and its permissions") }
        let token = line.trimmingCharacters(in: .whitespaces)
        guard token.count >= 16, token.allSatisfy({ $0.isLetter || $0.isNumber || "-_.~".contains($0) }),
            token.allSatisfy(\.isASCII)
        else {
            throw ValidationError(
                "--token-file \(tokenFile): the token must be at least 16 characters of A–Z, a–z, 0–9, - _ . ~ (e.g. openssl rand -hex 32 > \(tokenFile))"
            )
        }
        return token
    }
}
