import AgentConfig
import AgentControl
import AgentPorts
import Foundation
import MosquittoTransport
import MotionWire
import Synchronization
import TestSupport
import Testing

/// The fleet the adversarial suite attacks: a real mosquitto with the shipped Deploy/mosquitto ACL and the shipped
/// mosquitto.conf's account lines (`acl_file`, `use_username_as_clientid`, `max_packet_size`, no anonymous
/// clients), device accounts named by device id, operator accounts, the operators' Ed25519 key, and real agents
/// streaming the accelerometer at QoS 1 so a capturing subscriber sees every seq.
///
/// Accounts: `operator` (what `motion-agent ctl` and `fleet` use), `watcher` and `flooder` — operator accounts as
/// Deploy/mosquitto/README.md says to add them (one connection per account), the watcher also allowed its own
/// readiness-probe topic (`test-subscriber/#`) — and one device account per device id given.
final class AdversarialFleet: Sendable {
    /// The repository root: this file is Tests/EndToEndTests/AdversarialFleet.swift.
    static let repository = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path
    static let deploy = repository + "/Deploy"

    /// The operators' key: the devices that sign trust its public key (`trusted.keys`).
    static let operatorKey = try! OperatorSigningKey(id: "ops-adv", privateKey: Array(repeating: 7, count: 32))
    /// A key no device trusts.
    static let rogueKey = try! OperatorSigningKey(id: "rogue-1", privateKey: Array(repeating: 9, count: 32))
    /// Another private key under the trusted key's id.
    static let impostorKey = try! OperatorSigningKey(id: "ops-adv", privateKey: Array(repeating: 11, count: 32))
    static let operatorAccounts = ["operator", "watcher", "flooder"]

    struct Failure: Error, CustomStringConvertible { var description: String }

    let directory: String
    let broker: MosquittoBroker
    /// Account → password.
    let passwords: [String: String]
    var keyFile: String { directory + "/operator.key" }
    var trustedKeysFile: String { directory + "/trusted.keys" }
    func passwordFile(_ account: String) -> String { directory + "/\(account).password" }

    /// Starts the broker with the shipped ACL (plus the operator accounts and one `user` block per device of
    /// `groups`, as Deploy/mosquitto/acl says group membership is written) and `extraConfiguration` lines.
    init(
        devices: [String],
        groups: [String: [String]] = [:],
        extraAccounts: [String: String] = [:],
        extraACL: String = "",
        extraConfiguration: [String] = [],
        directory: String? = nil
    ) async throws {
        let directory = directory ?? NSTemporaryDirectory() + "motion-adversarial-\(UUID().uuidString.prefix(8))"
        self.directory = directory
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        var passwords = extraAccounts
        for account in Self.operatorAccounts + devices { passwords[account] = "\(account)-secret" }
        self.passwords = passwords
        for (account, password) in passwords {
            try (password + "\n").write(toFile: directory + "/\(account).password", atomically: true, encoding: .utf8)
            chmod(directory + "/\(account).password", 0o600)
        }
        try Self.operatorKey.fileText.write(toFile: directory + "/operator.key", atomically: true, encoding: .utf8)
        chmod(directory + "/operator.key", 0o600)
        try (Self.operatorKey.trustLine + "\n").write(
            toFile: directory + "/trusted.keys",
            atomically: true,
            encoding: .utf8
        )

        let aclPath = directory + "/acl"
        try (Self.shippedACL(groups: groups) + extraACL).write(toFile: aclPath, atomically: true, encoding: .utf8)
        broker = try await MosquittoBroker.started(
            options: MosquittoBroker.Options(
                allowAnonymous: false,
                users: passwords,
                extraConfiguration: try Self.shippedAccountLines(aclPath: aclPath) + extraConfiguration
            )
        )
    }

    deinit {
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// Deploy/mosquitto/acl as shipped, then the extra operator accounts (copies of its `user operator` block) and
    /// the devices' group memberships.
    static func shippedACL(groups: [String: [String]]) throws -> String {
        let acl = try String(contentsOfFile: deploy + "/mosquitto/acl", encoding: .utf8)
        guard let operatorBlock = acl.range(of: "user operator\n")?.lowerBound else {
            throw Failure(description: "Deploy/mosquitto/acl has no `user operator` block")
        }
        var text = acl + "\n"
        for account in operatorAccounts where account != "operator" {
            text += acl[operatorBlock...].replacingOccurrences(of: "user operator", with: "user \(account)") + "\n"
            // CapturingSubscriber's readiness probe (its own private topic).
            if account == "watcher" { text += "topic readwrite test-subscriber/#\n" }
        }
        for (device, names) in groups.sorted(by: { $0.key < $1.key }) {
            text += "user \(device)\n"
            for name in names {
                text += "topic read motion/group/\(name)/control\ntopic read motion/group/\(name)/desired\n"
            }
        }
        return text
    }

    /// The shipped mosquitto.conf's account lines — `acl_file` (pointed at `aclPath`), `use_username_as_clientid`
    /// and `max_packet_size` — checked to be there, and `allow_anonymous false` (the fixture's option). The
    /// listener and password file are the fixture's; TLS is left out (SecurityEndToEndTests runs it).
    static func shippedAccountLines(aclPath: String) throws -> [String] {
        let shipped = try String(contentsOfFile: deploy + "/mosquitto/mosquitto.conf", encoding: .utf8)
        let lines = shipped.split(separator: "\n").map(String.init).filter { !$0.hasPrefix("#") }
        guard lines.contains("allow_anonymous false") else {
            throw Failure(description: "the shipped mosquitto.conf no longer says allow_anonymous false")
        }
        var kept: [String] = []
        for key in ["acl_file", "use_username_as_clientid", "max_packet_size"] {
            guard let line = lines.first(where: { $0.hasPrefix(key + " ") }) else {
                throw Failure(description: "the shipped mosquitto.conf has no \(key) line")
            }
            kept.append(key == "acl_file" ? "acl_file \(aclPath)" : line)
        }
        guard kept.contains("use_username_as_clientid true") else {
            throw Failure(description: "the shipped mosquitto.conf no longer binds client ids to accounts")
        }
        return kept
    }

    // MARK: - agents

    /// The config of a device on `port` (default: this broker) logging in with its own account: the simulated IMU
    /// with only the accelerometer on, 10 Hz at QoS 1 (so the capturing subscriber sees every seq), signing on
    /// when `signed`.
    func agentConfig(_ device: String, signed: Bool, groups: [String] = [], port: Int? = nil) -> String {
        var control = "control:\n  max_age_s: 300\n"
        if !groups.isEmpty { control += "  groups: [\(groups.joined(separator: ", "))]\n" }
        if signed { control += "  trusted_keys_file: \(trustedKeysFile)\n" }
        let off = ["gyroscope", "magnetometer", "device-motion", "pedometer", "activity", "altimeter"]
            .map { "  \($0):\n    enabled: false\n" }.joined()
        return """
            device:
              id: \(device)
            agent:
              state_dir: state
              log_level: info
            source:
              kind: simulated
              simulated:
                scenario: stationary
                seed: 7
                rate_hz: 40
            mqtt:
              host: 127.0.0.1
              port: \(port ?? broker.port)
              protocol: v5
              keepalive: 5
              reconnect_min_delay: 0.2
              reconnect_max_delay: 1
              username: \(device)
              password_file: \(passwordFile(device))
            streams:
              accelerometer:
                rate_hz: 10
                qos: 1

            """ + off + control
    }

    /// Starts the real agent for `device` (in `directory` to run again on an earlier run's state).
    func startAgent(
        _ device: String,
        signed: Bool,
        groups: [String] = [],
        port: Int? = nil,
        directory: String? = nil
    ) throws -> AgentProcess {
        try AgentProcess(
            config: agentConfig(device, signed: signed, groups: groups, port: port),
            directory: directory
        )
    }

    // MARK: - clients

    /// A subscriber with the `watcher` account that records everything the operators may read (`motion/#`,
    /// `motion-ctl/#`) at QoS 1, in the broker's order.
    func observer(filters: [String] = ["motion/#", "motion-ctl/#"]) async throws -> CapturingSubscriber {
        try await CapturingSubscriber(
            options: broker.connectOptions(clientID: "watcher", username: "watcher", password: passwords["watcher"]),
            filters: filters,
            qos: 1,
            timeout: 20
        )
    }

    /// A connected MQTT 5 client of `account` (client id = the account: the broker sets it so anyway). Its
    /// `events` are left for the caller: an AsyncStream has one consumer, and ending an iteration ends it.
    func client(_ account: String) async throws -> MosquittoClient {
        let client = MosquittoClient()
        try client.connect(
            broker.connectOptions(clientID: account, username: account, password: passwords[account])
        )
        do {
            try await Self.until("\(account) connected", timeout: 20) { client.isConnected }
        } catch {
            throw Failure(description: "\(account) could not connect to the broker:\n\(broker.log.suffix(1500))")
        }
        return client
    }

    struct Output: Sendable {
        var code: Int32?
        var output: String
        var errors: String
        var lines: [String] { output.split(separator: "\n").map(String.init) }
    }

    /// Runs `motion-agent <command…> --port P --username ACCOUNT --password-file F <arguments…>` to its end.
    func cli(
        _ command: [String],
        _ arguments: [String],
        account: String = "operator",
        port: Int? = nil,
        timeout: Double = 40
    ) async throws -> Output {
        let runner = ProcessRunner(
            executable: AgentProcess.executable,
            arguments: command + [
                "--port", "\(port ?? broker.port)", "--username", account, "--password-file", passwordFile(account),
            ] + arguments
        )
        try runner.start()
        let code = await runner.waitForExit(timeout: timeout)
        if code == nil { runner.kill() }
        return Output(code: code, output: runner.standardOutput, errors: runner.standardError)
    }

    /// `motion-agent ctl` as the operator, signed with the operator's key when `signed`. `timeout` is how long the
    /// tool waits for a reply: short where no reply is the expected outcome, long where one must come (a loaded
    /// 2-core host running the suite's agents side by side took over 5 s to answer during a flood).
    func ctl(_ arguments: [String], signed: Bool = true, port: Int? = nil, timeout: Int = 5) async throws -> Output {
        try await cli(
            ["ctl"],
            ["--timeout", String(timeout)] + (signed ? ["--signing-key", keyFile] : []) + arguments,
            port: port
        )
    }

    /// A signed `ping` to `device` answered ok: the agent is alive and has read everything queued before it.
    func expectAnswers(_ device: String, signed: Bool = true, port: Int? = nil, _ when: String) async throws {
        let ping = try await ctl(["--device", device, "ping"], signed: signed, port: port, timeout: 20)
        #expect(
            ping.code == 0 && ping.output.hasPrefix("\(device)\tok\t200"),
            "\(device) does not answer \(when): \(ping.output)\(ping.errors)"
        )
    }

    /// Publishes as `account` (with `password`, default this broker's for the account) with mosquitto_pub (MQTT 5,
    /// QoS 1; an independent client) and returns the reason
    /// code of the broker's PUBACK: 135 (not authorized) when the ACL refused the message, 0 or 16 (no matching
    /// subscribers) when the broker took it; throws, with mosquitto_pub's output, when no PUBACK came.
    func publishAs(
        _ account: String,
        _ topic: String,
        _ payload: String,
        retain: Bool = false,
        port: Int? = nil,
        password: String? = nil,
        clientID: String? = nil
    ) async throws -> Int? {
        var arguments = [
            "-h", broker.host, "-p", "\(port ?? broker.port)", "-u", account, "-P",
            password ?? passwords[account] ?? "",
            "-V", "mqttv5", "-q", "1", "-d", "-t", topic,
        ]
        arguments += payload.isEmpty ? ["-n"] : ["-m", payload]
        if retain { arguments.append("-r") }
        if let clientID { arguments += ["-i", clientID] }
        let runner = ProcessRunner(executable: "/usr/bin/mosquitto_pub", arguments: arguments)
        try runner.start()
        guard await runner.waitForExit(timeout: 20) != nil else {
            runner.kill()
            throw Failure(description: "mosquitto_pub as \(account) on \(topic) did not finish")
        }
        // -d: "Client <id> received PUBACK (Mid: 1, RC:135)".
        let text = runner.standardOutput + runner.standardError
        guard let range = text.range(of: "received PUBACK (Mid: 1, RC:") else {
            throw Failure(description: "mosquitto_pub as \(account) on \(topic) got no PUBACK:\n\(text.suffix(1000))")
        }
        return Int(text[range.upperBound...].prefix { $0.isNumber })
    }

    // MARK: - signing

    private static let counter = Mutex<Int>(0)

    /// The next counter for envelopes signed here: rising, and at least the microseconds since 1970 (as
    /// `motion-agent ctl` makes them), so it lies above every device's floor.
    static func nextCounter() -> Int {
        counter.withLock { last in
            last = max(last + 1, Int(Date().timeIntervalSince1970 * 1e6))
            return last
        }
    }

    /// A command envelope as `motion-agent ctl --signing-key` makes it, for `target`.
    static func signedCommand(
        _ members: [(key: String, value: StrictJSON.Value)],
        target: String,
        counter: Int? = nil,
        key: OperatorSigningKey = operatorKey
    ) -> [UInt8] {
        SignedEnvelope.seal(
            [("target", .string(target)), ("counter", .number(String(counter ?? nextCounter())))] + members
                + [("timestamp", .number(String(Date().timeIntervalSince1970)))],
            with: key
        )
    }

    /// `{"id": id, "command": name, …}`.
    static func command(
        _ id: String,
        _ name: String,
        _ arguments: [(String, StrictJSON.Value)] = []
    ) -> [(key: String, value: StrictJSON.Value)] {
        [("id", .string(id)), ("command", .string(name))] + arguments.map { (key: $0.0, value: $0.1) }
    }

    /// The signed object inside an envelope (its members in order), unverified.
    static func signedObject(_ envelope: [UInt8]) -> [(key: String, value: StrictJSON.Value)]? {
        guard let outer = try? StrictJSON.parse(envelope, limits: .document),
            let signed = outer["signed"]?.string.flatMap(Base64.decode),
            case .object(let members)? = try? StrictJSON.parse(signed, limits: .document)
        else { return nil }
        return members
    }

    // MARK: - waiting and checking

    struct Timeout: Error, CustomStringConvertible { var description: String }

    static func until(_ what: String, timeout: Double, _ condition: () -> Bool) async throws {
        let deadline = ContinuousClock.now + .seconds(timeout)
        while !condition() {
            guard ContinuousClock.now < deadline else {
                throw Timeout(description: "waited \(timeout) s for \(what)")
            }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    /// Waits (bounded) until the agent's log says `text`; records a failure naming `attack` when it never does.
    static func expectLog(
        _ agent: AgentProcess,
        _ text: String,
        _ attack: String,
        timeout: Double = 20,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async {
        let said = await agent.runner.waitForOutput(containing: text, timeout: timeout)
        #expect(
            said,
            "\(attack): the agent's log never said \"\(text)\"; its last lines:\n\(agent.runner.standardError.suffix(2500))",
            sourceLocation: sourceLocation
        )
    }

    /// Control characters a terminal would act on: C0 but newline and tab, DEL and C1 (ESC among them).
    static func controlCharacters(in text: String) -> [String] {
        text.unicodeScalars.filter { scalar in
            (scalar.value < 0x20 && scalar != "\n" && scalar != "\t") || (0x7F...0x9F).contains(scalar.value)
        }.map { "U+" + String($0.value, radix: 16, uppercase: true) }
    }

    /// The stream's messages must be the device's own, one seq after the other: every one a JSON object with a
    /// whole `seq` one above the one before it — but for `restarts` new runs of the agent, where seq may start
    /// over. Returns the problems.
    static func seqProblems(_ messages: [InboundMessage], restarts: Int = 0) -> [String] {
        var problems: [String] = []
        var previous: Int?
        var runs = 0
        for message in messages {
            guard let seq = payloadJSON(message)["seq"] as? Int else {
                problems.append(
                    "a message without a seq: \(String(decoding: message.payload.prefix(120), as: UTF8.self))"
                )
                continue
            }
            if let last = previous, seq != last + 1 {
                if seq <= last && runs < restarts {
                    runs += 1
                } else {
                    problems.append("seq \(seq) after \(last)")
                }
            }
            previous = seq
        }
        return problems
    }

    /// The device's latest retained status as JSON (empty before one arrived).
    static func status(_ observer: CapturingSubscriber, _ device: String) -> [String: Any] {
        var status = observer.messages(on: "motion/\(device)/status").last.map(payloadJSON) ?? [:]
        // The status carries the configuration's summary; every setting's value and source is the device's
        // retained {root}/configuration, published right after the status it goes with.
        if let account = observer.messages(on: "motion/\(device)/configuration").last.map(payloadJSON) {
            var configuration = status["configuration"] as? [String: Any] ?? [:]
            configuration["settings"] = account["settings"]
            status["configuration"] = configuration
        }
        return status
    }

    /// `configuration.settings` of a status: key → (value, source).
    static func settings(_ status: [String: Any]) -> [String: String] {
        let settings = (status["configuration"] as? [String: Any])?["settings"] as? [String: Any] ?? [:]
        var out: [String: String] = [:]
        for (key, entry) in settings {
            let entry = entry as? [String: Any]
            out[key] = "\(entry?["value"] as? String ?? "?") (\(entry?["source"] as? String ?? "?"))"
        }
        return out
    }

    /// `configuration.desired` of a status: layer → version.
    static func desired(_ status: [String: Any]) -> [String: Int] {
        ((status["configuration"] as? [String: Any])?["desired"] as? [String: Int]) ?? [:]
    }

    /// Replies on `topic` whose id is `id`.
    static func replies(_ observer: CapturingSubscriber, on topic: String, id: String) -> [[String: Any]] {
        observer.messages(on: topic).map(payloadJSON).filter { $0["id"] as? String == id }
    }
}
