import AgentConfig
import AgentControl
import AgentPorts
import ArgumentParser
import CBenchSupport
import Foundation
import MotionWire
import Platform

/// What the control door costs per message (issue 27): an unsigned command, a signed one (Ed25519 verify, the
/// strict parse, the counter ledger written to a real state directory or kept in memory), and the refusals that
/// junk and replays meet — so the price of signing, and what a flood of junk can make the agent spend, are figures.
struct ControlDoorCost: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "control",
        abstract: "µs per control message through the door: unsigned, signed (Ed25519), and refused junk."
    )

    @Option(help: "Messages per repetition.") var messages = 2_000
    @Option(help: "Repetitions; the median is reported.") var repetitions = 7
    @Option(help: "The state directory for the counter ledger (default: a temporary directory).")
    var stateDirectory: String?

    func run() throws {
        let directory = stateDirectory ?? NSTemporaryDirectory() + "motion-bench-control-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { if stateDirectory == nil { try? FileManager.default.removeItem(atPath: directory) } }
        BenchRow.printTable(
            "Control door (median of \(repetitions) × \(messages) messages; counter ledger in \(directory))",
            try Self.measure(messages: messages, repetitions: repetitions, stateDirectory: directory)
        )
    }

    static let topic = "motion/bench/control"

    static func measure(messages: Int, repetitions: Int, stateDirectory: String) throws -> [BenchRow] {
        let key = try OperatorSigningKey.generate(id: "bench")
        let stranger = try OperatorSigningKey.generate(id: "bench")
        let keys = try OperatorKeys(TrustedKeyFile(keys: [(key.id, key.publicKey)]))
        let now = Date().timeIntervalSince1970
        func command(_ i: Int) -> [(key: String, value: StrictJSON.Value)] {
            [
                ("id", .string("bench-\(i)")), ("command", .string("set-rate")), ("stream", .string("gyroscope")),
                ("rate_hz", .number("100")),
            ]
        }
        func signed(_ i: Int, counter: Int, with signer: OperatorSigningKey = key) -> [UInt8] {
            SignedEnvelope.seal(
                [("target", .string(topic)), ("counter", .number(String(counter)))] + command(i),
                with: signer
            )
        }
        func settings(signing: Bool, store: (any StateDirectory)?) -> ControlAdmission.Settings {
            var s = ControlAdmission.Settings()
            s.ratePerSecond = 1e12
            s.burst = 1e12
            s.refusalsPerSecond = 1e12
            s.refusalBurst = 1e12
            s.keys = signing ? keys : nil
            s.counterStore = store
            return s
        }
        var admitted = 0
        var refused = 0
        /// µs per message of `payloads` through a fresh door.
        func cost(_ payloads: [[UInt8]], _ settings: ControlAdmission.Settings) -> Double {
            var door = ControlAdmission(settings: settings, now: now)
            let start = bench_monotonic_ns()
            for payload in payloads {
                switch door.admit(payload, topic: topic, retained: false, now: now, clockSynchronized: true) {
                case .admitted: admitted += 1
                case .refused, .ignored: refused += 1
                }
            }
            return Double(bench_monotonic_ns() - start) / 1000 / Double(max(payloads.count, 1))
        }
        /// µs per message of `payloads` sent again to the door that just admitted them: replays.
        func replayCost(_ payloads: [[UInt8]], _ settings: ControlAdmission.Settings) -> Double {
            var door = ControlAdmission(settings: settings, now: now)
            for payload in payloads {
                _ = door.admit(payload, topic: topic, retained: false, now: now, clockSynchronized: true)
            }
            let start = bench_monotonic_ns()
            for payload in payloads {
                switch door.admit(payload, topic: topic, retained: false, now: now, clockSynchronized: true) {
                case .admitted: admitted += 1
                case .refused, .ignored: refused += 1
                }
            }
            return Double(bench_monotonic_ns() - start) / 1000 / Double(max(payloads.count, 1))
        }
        func median(_ body: (Int) -> Double) -> Double {
            Statistics.median((0..<max(1, repetitions)).map(body))
        }
        let base = Int(now * 1e6)
        let unsigned = (0..<messages).map { StrictJSON.Value.object(command($0)).encoded() }
        func signedRun(_ run: Int) -> [[UInt8]] {
            (0..<messages).map { signed($0, counter: base + run * messages + $0 + 1) }
        }
        let stateFiles = StateFiles(path: stateDirectory)

        // No state directory: the counter ledger kept in memory.
        let inMemory: (any StateDirectory)? = nil
        let unsignedCost = median { _ in cost(unsigned, settings(signing: false, store: inMemory)) }
        let signedMemory = median { run in cost(signedRun(run), settings(signing: true, store: inMemory)) }
        let signedDisk = median { run in
            try? FileManager.default.removeItem(atPath: stateDirectory + "/command-counters.json")
            return cost(signedRun(run + repetitions), settings(signing: true, store: stateFiles))
        }
        let replay = median { run in replayCost(signedRun(run), settings(signing: true, store: inMemory)) }
        let badSignature = (0..<messages).map { signed($0, counter: base + $0 + 1, with: stranger) }
        let badSignatureCost = median { _ in cost(badSignature, settings(signing: true, store: inMemory)) }
        let notEnvelopeCost = median { _ in cost(unsigned, settings(signing: true, store: inMemory)) }
        let untrusted = try OperatorSigningKey.generate(id: "nobody")
        let untrustedPayloads = (0..<messages).map { signed($0, counter: base + $0 + 1, with: untrusted) }
        let untrustedCost = median { _ in cost(untrustedPayloads, settings(signing: true, store: inMemory)) }
        let sample = signed(0, counter: base)
        let signCost = median { _ in
            let start = bench_monotonic_ns()
            var bytes = 0
            for i in 0..<messages { bytes &+= signed(i, counter: base + i).count }
            admitted &+= bytes & 1
            return Double(bench_monotonic_ns() - start) / 1000 / Double(messages)
        }
        let rows = [
            BenchRow(name: "unsigned command (signing off)", value: String(format: "%.1f µs", unsignedCost)),
            BenchRow(
                name: "signed command, counters in memory",
                value: String(format: "%.1f µs", signedMemory)
            ),
            BenchRow(
                name: "signed command, counters kept on disk",
                value: String(format: "%.1f µs", signedDisk)
            ),
            BenchRow(name: "refused: a replay (counter used already)", value: String(format: "%.1f µs", replay)),
            BenchRow(name: "refused: signature does not match", value: String(format: "%.1f µs", badSignatureCost)),
            BenchRow(name: "refused: key not trusted", value: String(format: "%.1f µs", untrustedCost)),
            BenchRow(name: "refused: not a signed envelope", value: String(format: "%.1f µs", notEnvelopeCost)),
            BenchRow(name: "signing one command (operator side)", value: String(format: "%.1f µs", signCost)),
            BenchRow(name: "signed envelope size", value: "\(sample.count) bytes"),
            // Printed so the optimiser cannot drop the work; also shows every run admitted what it should.
            BenchRow(name: "admitted / refused (all runs)", value: "\(admitted) / \(refused)"),
        ]
        return rows
    }
}
