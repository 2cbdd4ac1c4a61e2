import AgentPorts
import Foundation
import TestSupport
import Testing

/// What Deploy/ ships, checked for real: the systemd unit with systemd-analyze, install.sh and uninstall.sh in a
/// throw-away root, the container's runtime packages against Debian 12, and the edge-to-central bridge with two
/// mosquitto brokers, the agent on the edge one and the operator on the central one.
@Suite(.timeLimit(.minutes(10)), .serialized) struct DeployTests {
    /// The repository root: this file is Tests/EndToEndTests/DeployTests.swift.
    static let repository = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path
    static let deploy = repository + "/Deploy"
    static let systemdAnalyze = "/usr/bin/systemd-analyze"

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// Runs `executable` to its end (bounded by `timeout` s) and returns the exit code and both outputs.
    static func run(
        _ executable: String,
        _ arguments: [String],
        environment: [String: String] = [:],
        timeout: Double = 60
    ) async throws -> (code: Int32?, output: String, errors: String) {
        var env = ProcessInfo.processInfo.environment
        for (key, value) in environment { env[key] = value }
        let runner = ProcessRunner(executable: executable, arguments: arguments, environment: env)
        try runner.start()
        let code = await runner.waitForExit(timeout: timeout)
        if code == nil { runner.kill() }
        return (code, runner.standardOutput, runner.standardError)
    }

    static func temporaryDirectory(_ name: String) throws -> String {
        let path = NSTemporaryDirectory() + "motion-agent-\(name)-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    static func requireSystemdAnalyze() throws {
        guard FileManager.default.isExecutableFile(atPath: systemdAnalyze) else {
            throw Failure(description: "\(systemdAnalyze) is missing: run `apt-get install -y systemd`")
        }
    }

    /// The shipped unit with ExecStart pointing at the agent SwiftPM built (verify checks that it is executable).
    static func unitForVerification() throws -> String {
        let directory = try temporaryDirectory("unit")
        let unit = try String(contentsOfFile: deploy + "/motion-agent.service", encoding: .utf8)
        #expect(
            unit.contains("ExecStart=/usr/local/bin/motion-agent run"),
            "install.sh puts the binary in /usr/local/bin"
        )
        let path = directory + "/motion-agent.service"
        try unit.replacingOccurrences(of: "/usr/local/bin/motion-agent", with: AgentProcess.executable)
            .write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    // MARK: - systemd unit

    @Test func unitPassesSystemdAnalyzeVerify() async throws {
        try Self.requireSystemdAnalyze()
        let unit = try Self.unitForVerification()
        defer {
            try? FileManager.default.removeItem(atPath: URL(fileURLWithPath: unit).deletingLastPathComponent().path)
        }
        let result = try await Self.run(Self.systemdAnalyze, ["verify", unit])
        #expect(result.code == 0, "\(result.errors)")
        // verify exits 0 on unknown keys and unparsable values too, and only warns: any message is a failure.
        #expect(
            result.errors.isEmpty && result.output.isEmpty,
            "systemd-analyze verify said: \(result.errors)\(result.output)"
        )
    }

    @Test func unitIsHardened() async throws {
        try Self.requireSystemdAnalyze()
        let unit = try Self.unitForVerification()
        defer {
            try? FileManager.default.removeItem(atPath: URL(fileURLWithPath: unit).deletingLastPathComponent().path)
        }
        // systemd's own exposure score (0 = locked down, 10 = unprotected; the threshold is in tenths):
        // the unit scores 2.4 "OK" with systemd 252. A removed protection pushes it over 3.0.
        let result = try await Self.run(Self.systemdAnalyze, ["security", "--offline=yes", "--threshold=30", unit])
        let overall = result.output.split(separator: "\n").last { $0.contains("Overall exposure level") } ?? ""
        #expect(result.code == 0, "exposure above 3.0: \(overall)\n\(result.errors)")
        let text = try String(contentsOfFile: unit, encoding: .utf8)
        for line in [
            "User=motion-agent", "SupplementaryGroups=iio", "NoNewPrivileges=yes", "ProtectSystem=strict",
            "StateDirectory=motion-agent", "Restart=on-failure", "RestartPreventExitStatus=78",
            "DeviceAllow=char-iio rw", "MemoryMax=128M", "MemorySwapMax=0",
        ] {
            #expect(text.split(separator: "\n").contains { $0 == line }, "the unit lacks \(line)")
        }
    }

    /// The system calls the unit's `SystemCallFilter=` allows: its @groups expanded by systemd-analyze.
    static func allowedSystemCalls(unit: String) async throws -> Set<String> {
        let text = try String(contentsOfFile: unit, encoding: .utf8)
        let filter = try #require(text.split(separator: "\n").first { $0.hasPrefix("SystemCallFilter=") })
        var allowed: Set<String> = []
        var pending = filter.dropFirst("SystemCallFilter=".count).split(separator: " ").map(String.init)
        var expanded: Set<String> = []
        while let item = pending.popLast() {
            guard item.hasPrefix("@") else {
                allowed.insert(item)
                continue
            }
            guard expanded.insert(item).inserted else { continue }
            let listing = try await run(systemdAnalyze, ["syscall-filter", item])
            #expect(listing.code == 0, "systemd-analyze syscall-filter \(item): \(listing.errors)")
            // The group's own name, then its members indented (nested groups start with @), then comments.
            for line in listing.output.split(separator: "\n").dropFirst() {
                let name = line.trimmingCharacters(in: .whitespaces)
                guard line.hasPrefix(" "), !name.isEmpty, !name.hasPrefix("#") else { continue }
                if name.hasPrefix("@") { pending.append(name) } else { allowed.insert(name) }
            }
        }
        return allowed
    }

    /// Every system call the agent makes while it connects, streams, answers a command and shuts down is one the
    /// unit's seccomp filter allows, so `SystemCallErrorNumber=EPERM` never fails a call the agent needs. strace
    /// follows all threads; the run uses the simulated IMU (the IIO path is not traced here).
    @Test func theAgentsSystemCallsPassTheUnitsFilter() async throws {
        try Self.requireSystemdAnalyze()
        let strace = "/usr/bin/strace"
        guard FileManager.default.isExecutableFile(atPath: strace) else {
            throw Failure(description: "\(strace) is missing: run `apt-get install -y strace`")
        }
        let unit = try Self.unitForVerification()
        let directory = URL(fileURLWithPath: unit).deletingLastPathComponent().path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let allowed = try await Self.allowedSystemCalls(unit: unit)
        #expect(allowed.contains("read") && allowed.contains("clock_adjtime") && !allowed.contains("reboot"))

        let broker = try await MosquittoBroker.started()
        let configPath = directory + "/config.yaml"
        try AgentProcess.config(device: "strace-1", port: broker.port, extra: "control:\n  groups: [traced]\n")
            .replacingOccurrences(of: "state_dir: state", with: "state_dir: \(directory)/state")
            .write(toFile: configPath, atomically: true, encoding: .utf8)
        let trace = directory + "/trace"
        let traced = ProcessRunner(
            executable: strace,
            arguments: ["-f", "-qq", "-o", trace, AgentProcess.executable, "run", "--config", configPath]
        )
        try traced.start()
        defer { traced.kill() }
        let subscriber = try await CapturingSubscriber(broker: broker, filters: ["motion/strace-1/#"])
        try await subscriber.waitFor(count: 20, on: "motion/strace-1/accelerometer", timeout: 30)
        let ping = try await Self.run(
            AgentProcess.executable,
            ["ctl", "--port", "\(broker.port)", "--timeout", "10", "--device", "strace-1", "ping"]
        )
        #expect(ping.code == 0, "\(ping.output)\(ping.errors)")
        // SIGTERM to the agent itself (strace's child), for the graceful shutdown path.
        let children = try String(
            contentsOfFile: "/proc/\(traced.processIdentifier)/task/\(traced.processIdentifier)/children",
            encoding: .utf8
        )
        let agentPID = try #require(children.split(separator: " ").first.flatMap { Int32($0) })
        kill(agentPID, SIGTERM)
        #expect(await traced.waitForExit(timeout: 30) == 0, "\(traced.standardError)")
        await subscriber.close()

        // strace -f lines: "PID   name(args…) = result", "PID <... name resumed>…", "PID +++ exited…".
        var used: Set<String> = []
        for line in try String(contentsOfFile: trace, encoding: .utf8).split(separator: "\n") {
            let fields = line.split(separator: " ", maxSplits: 1)
            guard fields.count == 2 else { continue }
            var call = fields[1].drop { $0 == " " }  // strace pads the pid column
            if call.hasPrefix("<... ") { call = call.dropFirst(5) }
            let name = call.prefix { $0.isLetter || $0.isNumber || $0 == "_" }
            if !name.isEmpty, call.dropFirst(name.count).first == "(" || call.hasPrefix(name + " resumed") {
                used.insert(String(name))
            }
        }
        #expect(
            used.contains("clock_adjtime") && used.contains("connect"),
            "the trace looks incomplete: \(used.sorted())"
        )
        // execve is strace starting the agent, before any filter would apply.
        let refused = used.subtracting(allowed).subtracting(["execve"])
        #expect(refused.isEmpty, "SystemCallFilter= would refuse \(refused.sorted()) (used: \(used.sorted()))")
    }

    // MARK: - install.sh / uninstall.sh

    /// Every path under `root` (relative, directories with a trailing /) with its permission bits.
    static func tree(_ root: String) throws -> [String: Int] {
        var result: [String: Int] = [:]
        let manager = FileManager.default
        guard let enumerator = manager.enumerator(atPath: root) else { return result }
        for case let relative as String in enumerator {
            let attributes = try manager.attributesOfItem(atPath: root + "/" + relative)
            let isDirectory = attributes[.type] as? FileAttributeType == .typeDirectory
            result[relative + (isDirectory ? "/" : "")] = (attributes[.posixPermissions] as? Int) ?? -1
        }
        return result
    }

    @Test func installScriptStagesExactlyWhatItSays() async throws {
        let root = try Self.temporaryDirectory("destdir")
        defer { try? FileManager.default.removeItem(atPath: root) }
        let install = [Self.deploy + "/install.sh", "--no-build", "--binary", AgentProcess.executable]
        let first = try await Self.run("/bin/bash", install, environment: ["DESTDIR": root])
        #expect(first.code == 0, "\(first.output)\(first.errors)")
        #expect(first.output.contains("skipped udevadm and systemctl"), "\(first.output)")

        let files = [
            "usr/local/bin/motion-agent": 0o755,
            "etc/systemd/system/motion-agent.service": 0o644,
            "etc/udev/rules.d/99-motion-agent-iio.rules": 0o644,
            "etc/motion-agent/config.yaml": 0o640,
        ]
        let directories = [
            "usr/", "usr/local/", "usr/local/bin/", "etc/", "etc/systemd/", "etc/systemd/system/",
            "etc/udev/", "etc/udev/rules.d/",
        ]
        var expected = files
        expected["etc/motion-agent/"] = 0o750
        let staged = try Self.tree(root)
        #expect(Set(staged.keys) == Set(expected.keys).union(directories), "staged: \(staged.keys.sorted())")
        for (path, mode) in expected {
            #expect(staged[path] == mode, "\(path): \(String(staged[path] ?? -1, radix: 8))")
        }
        let sources = [
            "usr/local/bin/motion-agent": AgentProcess.executable,
            "etc/systemd/system/motion-agent.service": Self.deploy + "/motion-agent.service",
            "etc/udev/rules.d/99-motion-agent-iio.rules": Self.deploy + "/99-motion-agent-iio.rules",
            "etc/motion-agent/config.yaml": Self.repository + "/config.yaml",
        ]
        for (path, source) in sources {
            #expect(
                FileManager.default.contentsEqual(atPath: root + "/" + path, andPath: source),
                "\(path) differs from \(source)"
            )
        }

        // A second run keeps the operator's config and replaces the rest.
        let config = root + "/etc/motion-agent/config.yaml"
        let edited = "device:\n  id: kept-by-install\n"
        try edited.write(toFile: config, atomically: false, encoding: .utf8)
        try "stale".write(toFile: root + "/etc/systemd/system/motion-agent.service", atomically: false, encoding: .utf8)
        let second = try await Self.run("/bin/bash", install, environment: ["DESTDIR": root])
        #expect(second.code == 0, "\(second.output)\(second.errors)")
        #expect(second.output.contains("kept the existing /etc/motion-agent/config.yaml"))
        #expect(try String(contentsOfFile: config, encoding: .utf8) == edited)
        #expect(
            FileManager.default.contentsEqual(
                atPath: root + "/etc/systemd/system/motion-agent.service",
                andPath: Self.deploy + "/motion-agent.service"
            )
        )

        // An invalid existing config stops the install with the agent's message.
        try "mqtt:\n  port: 99999\n".write(toFile: config, atomically: false, encoding: .utf8)
        let refused = try await Self.run("/bin/bash", install, environment: ["DESTDIR": root])
        #expect(refused.code == 1)
        #expect(
            refused.errors.contains("mqtt.port") && refused.errors.contains("config.yaml is invalid"),
            "\(refused.errors)"
        )
        try edited.write(toFile: config, atomically: false, encoding: .utf8)

        // Uninstall removes the three installed files and keeps the config; --purge removes the config too.
        let uninstall = try await Self.run("/bin/bash", [Self.deploy + "/uninstall.sh"], environment: ["DESTDIR": root])
        #expect(uninstall.code == 0, "\(uninstall.output)\(uninstall.errors)")
        let left = try Self.tree(root)
        #expect(
            Set(left.keys) == Set(directories + ["etc/motion-agent/", "etc/motion-agent/config.yaml"]),
            "\(left.keys.sorted())"
        )
        let purge = try await Self.run(
            "/bin/bash",
            [Self.deploy + "/uninstall.sh", "--purge"],
            environment: ["DESTDIR": root]
        )
        #expect(purge.code == 0, "\(purge.output)\(purge.errors)")
        #expect(Set(try Self.tree(root).keys) == Set(directories))
    }

    // MARK: - container

    @Test func containerRuntimePackagesExistInDebian12AndCoverTheBinary() async throws {
        let result = try await Self.run(
            "/bin/bash",
            [Self.deploy + "/container/check-runtime-packages.sh", AgentProcess.executable],
            timeout: 120
        )
        #expect(result.code == 0, "\(result.errors)\n\(result.output)")
        for package in ["libmosquitto1", "libiio0", "libsqlite3-0", "ca-certificates"] {
            #expect(result.output.contains("package \(package) "), "\(result.output)")
        }
        #expect(result.output.contains("library libiio.so.0 from libiio0"), "\(result.output)")
        #expect(result.output.contains("library libmosquitto.so.1 from libmosquitto1"), "\(result.output)")
    }

    // MARK: - edge broker bridged to a central broker

    /// The shipped edge.conf from `connection` on, with the central address, the bridge's password and the CA
    /// substituted; fails when a line to substitute is missing, so the shipped file cannot drift from this test.
    static func bridgeSection(centralPort: Int, password: String, caFile: String) throws -> [String] {
        let shipped = try String(contentsOfFile: deploy + "/mosquitto-bridge/edge.conf", encoding: .utf8)
        let lines = shipped.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        guard let start = lines.firstIndex(where: { $0.hasPrefix("connection ") }) else {
            throw Failure(description: "edge.conf has no `connection` line")
        }
        let substitutions = [
            "address ": "address 127.0.0.1:\(centralPort)",
            "remote_password ": "remote_password \(password)",
            "bridge_cafile ": "bridge_cafile \(caFile)",
        ]
        var seen: Set<String> = []
        let section = lines[start...].map { line in
            for (prefix, replacement) in substitutions where line.hasPrefix(prefix) {
                seen.insert(prefix)
                return replacement
            }
            return line
        }
        guard seen.count == substitutions.count else {
            throw Failure(description: "edge.conf lacks \(Set(substitutions.keys).subtracting(seen).sorted())")
        }
        return section
    }

    @Test func bridgeCarriesStreamsToTheCentralBrokerAndCommandsToTheDevice() async throws {
        let pki = try Self.temporaryDirectory("bridge-pki")
        defer { try? FileManager.default.removeItem(atPath: pki) }
        let tls = try await TLSFiles.make(in: pki)
        // Central: plain listener for the operator and the subscriber, TLS listener with a password for the bridge.
        let tlsPort = FreePort.find()
        let central = try await MosquittoBroker.started(
            options: .init(
                users: ["edge-site-1": "bridge-secret"],
                extraConfiguration: [
                    "listener \(tlsPort) 127.0.0.1", "certfile \(tls.serverCertificate)", "keyfile \(tls.serverKey)",
                ]
            )
        )
        let edge = try await MosquittoBroker.started(
            options: .init(
                extraConfiguration: try Self.bridgeSection(
                    centralPort: tlsPort,
                    password: "bridge-secret",
                    caFile: tls.caFile
                )
            )
        )
        #expect(
            await central.waitForLog(containing: "as edge-site-1"),
            "the bridge did not connect over TLS:\n\(edge.log)\n\(central.log)"
        )

        let agent = try AgentProcess(
            config: AgentProcess.config(
                device: "bridged-1",
                port: edge.port,
                extra: "control:\n  groups: [site-1]\n"
            )
        )
        defer { agent.runner.kill() }
        let subscriber = try await CapturingSubscriber(broker: central, filters: ["motion/bridged-1/#"])
        try await subscriber.waitFor(count: 10, on: "motion/bridged-1/accelerometer", timeout: 20)
        try await subscriber.waitUntil(timeout: 20, "the retained birth through the bridge") { messages in
            messages.contains {
                $0.topic == "motion/bridged-1/status" && payloadJSON($0)["state"] as? String == "online"
            }
        }

        // Commands published centrally reach the device and the replies come back: MQTT 5 (response topic and
        // correlation data across the bridge), MQTT 3.1.1 (the device's reply topic), and group addressing.
        func ctl(_ arguments: [String], protocolVersion: String = "v5") async throws -> (Int32?, String) {
            let result = try await Self.run(
                AgentProcess.executable,
                ["ctl", "--port", "\(central.port)", "--protocol", protocolVersion, "--timeout", "5"] + arguments,
                timeout: 30
            )
            return (result.code, result.output + result.errors)
        }
        let (pingCode, ping) = try await ctl(["--device", "bridged-1", "ping"])
        #expect(pingCode == 0 && ping.hasPrefix("bridged-1\tok\t200"), "\(ping)\n\(edge.log)")
        let (legacyCode, legacy) = try await ctl(["--device", "bridged-1", "status"], protocolVersion: "v311")
        #expect(legacyCode == 0 && legacy.hasPrefix("bridged-1\tok\t200"), "\(legacy)")
        let (groupCode, group) = try await ctl(["--group", "site-1", "set-rate", "stream=accelerometer", "rate_hz=10"])
        #expect(groupCode == 0 && group.hasPrefix("bridged-1\tok\t200"), "\(group)")
        try await subscriber.waitUntil(timeout: 10, "the status with the new rate, through the bridge") { messages in
            messages.contains { m in
                m.topic == "motion/bridged-1/status"
                    && ((payloadJSON(m)["streams"] as? [String: Any])?["accelerometer"] as? [String: Any])?["rateHz"]
                        as? Double == 10
            }
        }

        // A group desired document published centrally reaches the device through the bridge…
        let setting = try await Self.run(
            AgentProcess.executable,
            [
                "fleet", "set", "--port", "\(central.port)", "--group", "site-1", "streams.gyroscope.rate_hz=20",
                "--wait", "15",
            ],
            timeout: 30
        )
        #expect(setting.code == 0, "\(setting.output)\(setting.errors)\n\(edge.log)")
        // …and stays retained on the edge broker: a restarted agent finds it there (its probe after subscribing
        // would otherwise remove the layer as cleared).
        agent.runner.terminate()
        #expect(await agent.runner.waitForExit(timeout: 15) == 0)
        let restarted = try AgentProcess(
            config: try String(contentsOfFile: agent.configPath, encoding: .utf8),
            directory: agent.directory
        )
        defer { restarted.runner.kill() }
        let births = subscriber.messages.count
        try await subscriber.waitUntil(timeout: 20, "the restarted agent's birth") { messages in
            messages.dropFirst(births).contains {
                $0.topic == "motion/bridged-1/status" && payloadJSON($0)["state"] as? String == "online"
            }
        }
        // The probe went out right after the birth; a command sent now is handled after it.
        let (pingAfter, pong) = try await ctl(["--device", "bridged-1", "ping"])
        #expect(pingAfter == 0, "\(pong)")
        #expect(!restarted.runner.standardError.contains("the broker retains no"), "\(restarted.runner.standardError)")
        let reread = try await CapturingSubscriber(broker: central, filters: ["motion/bridged-1/status"])
        try await reread.waitFor(count: 1, timeout: 10)
        let status = reread.messages.last.map(payloadJSON) ?? [:]
        #expect(
            (status["configuration"] as? [String: Any])?["desired"] as? [String: Int] == ["group site-1": 1],
            "\(status)"
        )
        await reread.close()
        await subscriber.close()
    }
}
