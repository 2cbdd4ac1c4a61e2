import Foundation

/// One fake IIO device as `Sources/Harness/FakeIIOTree/fake_iio.py` builds it under /sys/bus/iio/devices (the JSON
/// spec's field names).
package struct FakeIIODevice: Encodable, Sendable {
    package struct ScanElement: Encodable, Sendable {
        package var name: String
        package var index: Int
        package var type: String

        package init(_ name: String, index: Int, type: String) {
            self.name = name
            self.index = index
            self.type = type
        }
    }

    package struct Vanish: Encodable, Sendable {
        package var after: Int
        package var seconds: Double
    }

    package struct TimestampJump: Encodable, Sendable {
        package var at: Int
        package var delta_ns: Int64
    }

    package var id: String
    package var name: String
    /// Files in the device directory (sysfs attributes), without the trailing newline.
    package var attrs: [String: String]
    /// A trigger name makes `trigger/current_trigger` (empty) and a matching `triggerN` device.
    package var trigger: String?
    package var scan: [ScanElement]
    package var buffer_attrs: [String: String]
    /// Raw counts, one per non-timestamp scan element in index order; cycled.
    package var records: [[Int64]]
    package var t0_ns: Int64
    package var timestamp_jumps: [TimestampJump]
    package var vanish: Vanish?
    package var pace: Bool

    package init(
        id: String,
        name: String,
        attrs: [String: String],
        trigger: String? = nil,
        scan: [ScanElement] = [],
        bufferAttrs: [String: String] = [:],
        records: [[Int64]] = [],
        t0Ns: Int64 = 1_000_000_000
    ) {
        self.id = id
        self.name = name
        self.attrs = attrs
        self.trigger = trigger
        self.scan = scan
        buffer_attrs = bufferAttrs
        self.records = records
        t0_ns = t0Ns
        timestamp_jumps = []
        vanish = nil
        pace = true
    }

    /// After `after` records the device disappears from sysfs for `seconds`, then comes back re-probed.
    package mutating func vanish(after: Int, seconds: Double) {
        vanish = Vanish(after: after, seconds: seconds)
    }

    /// From record `at` on, timestamps are shifted by `deltaNs` (negative: the clock went backwards).
    package mutating func jumpTimestamps(at: Int, deltaNs: Int64) {
        timestamp_jumps.append(TimestampJump(at: at, delta_ns: deltaNs))
    }
}

/// The devices and triggers of one fake tree.
package struct FakeIIOSpec: Encodable, Sendable {
    package struct Trigger: Encodable, Sendable {
        package var id: String
        package var name: String
    }

    package var devices: [FakeIIODevice]
    package var triggers: [Trigger]

    package init(devices: [FakeIIODevice]) {
        self.devices = devices
        var triggers: [Trigger] = []
        for device in devices {
            if let name = device.trigger {
                triggers.append(Trigger(id: "trigger\(triggers.count)", name: name))
            }
        }
        self.triggers = triggers
    }
}

/// What a command run inside the fake tree printed.
package struct FakeIIOResult: Sendable {
    package var status: Int32
    package var stdout: String
    package var stderr: String

    /// Tab-separated fields of the lines starting with `kind`.
    package func lines(_ kind: String) -> [[String]] {
        stdout.split(separator: "\n").map {
            $0.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
        }
        .filter { $0.first == kind }
    }
}

/// Failure to run the fixture at all, with what is needed.
package struct FakeIIOError: Error, CustomStringConvertible {
    package var description: String
}

/// Runs programs against fake IIO devices in a private mount namespace (Sources/Harness/FakeIIOTree/fake_iio.py).
///
/// A multi-threaded process cannot `unshare(CLONE_NEWNS)`, so the code under test runs in a child: the
/// fixture builds the tree, starts the FIFO writers (and iiod when asked), then runs the command.
package enum FakeIIO {
    /// The fixture script, found from this source file's location.
    package static var scriptPath: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("FakeIIOTree/fake_iio.py").path
    }

    /// A product built next to the running test binary (e.g. `IIOProbe`, `motion-agent`).
    package static func builtProduct(_ name: String) throws -> String {
        let exe = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        var candidates = [exe.deletingLastPathComponent().appendingPathComponent(name).path]
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        candidates.append(root.appendingPathComponent(".build/debug/\(name)").path)
        if let found = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0) }) {
            return found
        }
        throw FakeIIOError(
            description:
                "\(name) was not built (looked in \(candidates.joined(separator: ", "))); run `swift build` first"
        )
    }

    /// Runs `command` inside a fresh fake tree built from `spec`. `iiod: true` also serves the tree with iiod
    /// on a free port that replaces `{IIOD_PORT}` in `command`. `limit` (seconds) is a safety net against a
    /// hang, not a timing assertion.
    package static func run(
        _ spec: FakeIIOSpec,
        iiod: Bool = false,
        limit: Double = 60,
        _ command: [String]
    ) async throws -> FakeIIOResult {
        guard
            let python = ["/usr/bin/python3", "/usr/local/bin/python3"].first(where: {
                FileManager.default.isExecutableFile(atPath: $0)
            }) ?? which("python3")
        else {
            throw FakeIIOError(description: "python3 is needed to build the fake IIO tree; install python3")
        }
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("fake-iio-spec-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let specURL = dir.appendingPathComponent("spec.json")
        try JSONEncoder().encode(spec).write(to: specURL)
        let stdoutURL = dir.appendingPathComponent("stdout")
        let stderrURL = dir.appendingPathComponent("stderr")
        _ = FileManager.default.createFile(atPath: stdoutURL.path, contents: nil)
        _ = FileManager.default.createFile(atPath: stderrURL.path, contents: nil)

        let process = Process()
        process.executableURL = URL(fileURLWithPath: python)
        var arguments = [scriptPath, specURL.path]
        if iiod { arguments += ["--iiod-port", "0"] }
        process.arguments = arguments + ["--"] + command
        process.standardOutput = try FileHandle(forWritingTo: stdoutURL)
        process.standardError = try FileHandle(forWritingTo: stderrURL)
        try process.run()
        // Polled with Task.sleep, not usleep: a test blocked here held one of the cooperative pool's two
        // threads (CI's 2 cores) for the whole command, and two at once starved every other test for 30 s.
        let deadline = Date().addingTimeInterval(limit)
        while process.isRunning && Date() < deadline { try? await Task.sleep(for: .milliseconds(20)) }
        if process.isRunning {
            process.terminate()
            process.waitUntilExit()
        }
        let out = (try? String(contentsOf: stdoutURL, encoding: .utf8)) ?? ""
        let err = (try? String(contentsOf: stderrURL, encoding: .utf8)) ?? ""
        return FakeIIOResult(status: process.terminationStatus, stdout: out, stderr: err)
    }

    static func which(_ tool: String) -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        return path.split(separator: ":").map { "\($0)/\(tool)" }.first {
            FileManager.default.isExecutableFile(atPath: $0)
        }
    }
}
