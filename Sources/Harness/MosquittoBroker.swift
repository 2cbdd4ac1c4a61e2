import AgentPorts
import Foundation
import Platform
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A real `mosquitto` broker on 127.0.0.1 for tests, with a generated configuration in a temporary
/// directory. A missing mosquitto is an error (tests fail, they do not skip).
package final class MosquittoBroker: Sendable {
    package static let executable = "/usr/sbin/mosquitto"
    package static let passwordTool = "/usr/bin/mosquitto_passwd"

    package struct Options: Sendable {
        package var allowAnonymous: Bool
        /// user name → password, written with `mosquitto_passwd -b` into the broker's password file.
        package var users: [String: String]
        /// Keep retained messages and persistent sessions in the temporary directory across restarts.
        package var persistence: Bool
        /// Lines appended to the generated mosquitto.conf.
        package var extraConfiguration: [String]

        package init(
            allowAnonymous: Bool = true,
            users: [String: String] = [:],
            persistence: Bool = false,
            extraConfiguration: [String] = []
        ) {
            self.allowAnonymous = allowAnonymous
            self.users = users
            self.persistence = persistence
            self.extraConfiguration = extraConfiguration
        }
    }

    package struct FixtureError: Error, CustomStringConvertible {
        package var description: String
        package init(description: String) { self.description = description }
    }

    package let host = "127.0.0.1"
    /// Fixed once the broker first listened; `start()` may move an automatically chosen port before that.
    package var port: Int { portValue.load(ordering: .relaxed) }
    private let portValue: Atomic<Int>
    private let portChosenAutomatically: Bool
    /// The temporary directory with mosquitto.conf, the password file and persistence.
    package let directory: String
    package let options: Options
    private let running = Mutex<ProcessRunner?>(nil)
    /// Output of every broker process this fixture started, oldest first.
    private let pastLogs = Mutex<[String]>([])

    /// Writes the configuration; `start()` launches the broker.
    package init(options: Options = Options(), port: Int? = nil) throws {
        guard FileManager.default.isExecutableFile(atPath: Self.executable) else {
            throw FixtureError(
                description: "mosquitto is not installed: run `apt-get install -y mosquitto mosquitto-clients`"
            )
        }
        self.options = options
        portValue = Atomic(port ?? FreePort.find())
        portChosenAutomatically = port == nil
        let template = NSTemporaryDirectory() + "mosquitto-test-" + String(repeating: "X", count: 6)
        var path = Array(template.utf8CString)
        guard mkdtemp(&path) != nil else {
            throw FixtureError(description: "mkdtemp \(template) failed: \(String(cString: strerror(errno)))")
        }
        directory = String(decoding: path.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        try writeConfiguration()
    }

    /// Starts the broker and, bounded by `timeout` seconds, waits until its port accepts connections. The
    /// bound is generous: on a loaded 2-core machine (parallel suites, other builds) start-up has taken over 10 s.
    package static func started(options: Options = Options(), timeout: Double = 30) async throws -> MosquittoBroker {
        let broker = try MosquittoBroker(options: options)
        try await broker.start(timeout: timeout)
        return broker
    }

    /// Runs `body` with a started broker and stops it afterwards, also when `body` throws: the broker lives
    /// exactly as long as the run that uses it, whatever ARC decides about the last use of the reference.
    package static func withStarted<Result>(
        options: Options = Options(),
        timeout: Double = 30,
        _ body: (MosquittoBroker) async throws -> Result
    ) async throws -> Result {
        let broker = try await started(options: options, timeout: timeout)
        do {
            let result = try await body(broker)
            await broker.stop()
            return result
        } catch {
            await broker.stop()
            throw error
        }
    }

    deinit {
        if let process = running.withLock({ $0 }) {
            process.signal(SIGCONT)
            process.kill()
        }
        try? FileManager.default.removeItem(atPath: directory)
    }

    package var configurationPath: String { directory + "/mosquitto.conf" }

    package var isRunning: Bool { running.withLock { $0?.isRunning ?? false } }

    /// The running broker's pid (for its CPU time in /proc); nil while stopped.
    package var processIdentifier: Int32? {
        running.withLock { process in process.flatMap { $0.isRunning ? $0.processIdentifier : nil } }
    }

    /// Everything the broker processes wrote so far (mosquitto logs to stderr here).
    package var log: String {
        let current = running.withLock { $0 }
        return (pastLogs.withLock { $0 } + [current.map { $0.standardError + $0.standardOutput } ?? ""])
            .joined(separator: "\n")
    }

    /// Waits at most `timeout` seconds until the broker's log contains `text` (for example
    /// "New client connected from" with a client id, since `connection_messages` is on).
    package func waitForLog(containing text: String, timeout: Double = 10) async -> Bool {
        await Polling.until(timeout: timeout, interval: .milliseconds(10)) { log.contains(text) }
    }

    /// Connect options for a client of this broker.
    package func connectOptions(
        clientID: String,
        protocolVersion: MQTTProtocolVersion = .v5,
        keepaliveSeconds: Int = 30,
        cleanSession: Bool = true,
        username: String? = nil,
        password: String? = nil,
        will: BrokerWill? = nil
    ) -> BrokerConnectOptions {
        BrokerConnectOptions(
            host: host,
            port: port,
            clientID: clientID,
            protocolVersion: protocolVersion,
            keepaliveSeconds: keepaliveSeconds,
            cleanSession: cleanSession,
            username: username,
            password: password,
            will: will
        )
    }

    package func start(timeout: Double = 30) async throws {
        guard !isRunning else { return }
        // Another test may bind the same free port first; until this broker has listened once, move on.
        var attempts = 0
        while true {
            do {
                try await launch(timeout: timeout)
                hasListened.store(true, ordering: .relaxed)
                return
            } catch let error as FixtureError
                where error.description.contains("Address already in use") && portChosenAutomatically
                && !hasListened.load(ordering: .relaxed) && attempts < 5
            {
                attempts += 1
                portValue.store(FreePort.find(), ordering: .relaxed)
                try writeConfiguration()
            }
        }
    }

    private let hasListened = Atomic<Bool>(false)

    private func launch(timeout: Double) async throws {
        let process = ProcessRunner(executable: Self.executable, arguments: ["-c", configurationPath])
        try process.start()
        running.withLock { $0 = process }
        let deadline = ContinuousClock.now + .seconds(timeout)
        while ContinuousClock.now < deadline {
            if !process.isRunning {
                await process.waitForExit(timeout: 1)
                throw FixtureError(
                    description:
                        "mosquitto exited with \(process.exitCode ?? -1) before listening on \(host):\(port): \(process.standardError)"
                )
            }
            if FreePort.isAccepting(port) { return }
            try await Task.sleep(for: .milliseconds(20))
        }
        // Once more after the deadline: a test task starved of the cooperative pool (2 threads on CI's 2 cores)
        // can wake past it with mosquitto long listening — five tests once failed so, mosquitto's log saying
        // "running" 30 s earlier.
        if process.isRunning && FreePort.isAccepting(port) { return }
        process.kill()
        throw FixtureError(
            description:
                "mosquitto did not accept connections on \(host):\(port) within \(timeout) s: \(process.standardError)"
        )
    }

    /// SIGTERM, then waits (bounded) for the exit; mosquitto saves persistence on the way out.
    package func stop(timeout: Double = 5) async {
        await end(signal: SIGTERM, timeout: timeout)
    }

    /// SIGKILL: the broker vanishes without closing anything cleanly.
    package func kill() async {
        await end(signal: SIGKILL, timeout: 5)
    }

    /// SIGSTOP: the broker keeps its sockets open but answers nothing (a hung broker or a stalled network).
    /// Returns once the kernel reports the process stopped (bounded by 5 s).
    package func pause() async {
        guard let process = running.withLock({ $0 }) else { return }
        process.signal(SIGSTOP)
        let deadline = ContinuousClock.now + .seconds(5)
        while ContinuousClock.now < deadline {
            // T is "stopped".
            if ProcFS.state(pid: process.processIdentifier) == "T" { return }
            try? await Task.sleep(for: .milliseconds(5))
        }
    }

    /// SIGCONT after `pause()`.
    package func resume() {
        running.withLock { $0 }?.signal(SIGCONT)
    }

    /// Stops (SIGTERM) and starts again on the same port.
    package func restart(timeout: Double = 10) async throws {
        await stop()
        try await start(timeout: timeout)
    }

    private func end(signal: Int32, timeout: Double) async {
        guard let process = running.withLock({ $0 }) else { return }
        process.signal(SIGCONT)
        process.signal(signal)
        if await process.waitForExit(timeout: timeout) == nil {
            process.kill()
            await process.waitForExit(timeout: 5)
        }
        pastLogs.withLock { $0.append(process.standardError + process.standardOutput) }
        running.withLock { $0 = nil }
    }

    private func writeConfiguration() throws {
        var lines = [
            "# Generated by MotionAgent's TestSupport.MosquittoBroker",
            "listener \(port) 127.0.0.1",
            "allow_anonymous \(options.allowAnonymous)",
            "log_dest stderr",
            "log_type error",
            "log_type warning",
            "log_type notice",
            "log_type information",
            "connection_messages true",
        ]
        // As root mosquitto switches to the `mosquitto` user, which cannot read this private directory.
        if geteuid() == 0 { lines.append("user root") }
        if !options.users.isEmpty {
            let passwordFile = directory + "/passwords"
            _ = FileManager.default.createFile(atPath: passwordFile, contents: Data())
            for (user, password) in options.users.sorted(by: { $0.key < $1.key }) {
                try runPasswordTool(["-b", passwordFile, user, password])
            }
            lines.append("password_file \(passwordFile)")
        }
        if options.persistence {
            lines.append("persistence true")
            lines.append("persistence_location \(directory)/")
            lines.append("autosave_interval 1")
        } else {
            lines.append("persistence false")
        }
        lines.append(contentsOf: options.extraConfiguration)
        try (lines.joined(separator: "\n") + "\n").write(toFile: configurationPath, atomically: true, encoding: .utf8)
    }

    private func runPasswordTool(_ arguments: [String]) throws {
        guard FileManager.default.isExecutableFile(atPath: Self.passwordTool) else {
            throw FixtureError(
                description: "mosquitto_passwd is not installed: run `apt-get install -y mosquitto mosquitto-clients`"
            )
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Self.passwordTool)
        process.arguments = arguments
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            let text = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            throw FixtureError(
                description: "mosquitto_passwd \(arguments.dropLast().joined(separator: " ")) failed: \(text)"
            )
        }
    }
}
