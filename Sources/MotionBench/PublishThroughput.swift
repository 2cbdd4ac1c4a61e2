import AgentPipeline
import AgentPorts
import AgentRuntime
import ArgumentParser
import CBenchSupport
import Foundation
import Harness
import Logging
import MosquittoTransport
import MotionWire

/// Messages/s into a real mosquitto on loopback, 200-byte payloads, QoS 0 and 1: the agent's path (Outbox →
/// OutboxPublisher → MosquittoClient, wired as AgentBuilder wires them) against a bare libmosquitto publisher
/// (MosquittoTransport's `BarePublisher`: no agent code), same run, same broker, same in-flight window. Every message is counted at a subscriber.
///
/// Each side is timed from its first message leaving the producer (the agent: the first `Outbox.enqueue`, as a
/// stream does it; the bare library: the first `mosquitto_publish`) to the subscriber's receipt of the last.
/// A discarded warm-up pair precedes each QoS, and the sides alternate which goes first.
struct PublishThroughput: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "publish",
        abstract: "Messages/s into a local mosquitto: agent path vs bare libmosquitto, QoS 0 and 1."
    )

    @Option(help: "Messages per QoS 0 run (0 skips QoS 0).") var messagesQos0 = 100_000
    @Option(help: "Messages per QoS 1 run (0 skips QoS 1).") var messagesQos1 = 40_000
    @Option(help: "Runs per publisher and QoS (alternating, after one discarded warm-up pair); medians are reported.")
    var runs = 5
    @Option(help: "Max in-flight QoS > 0 messages (mqtt.max_inflight).") var window = 100
    @Option(help: "Payload bytes.") var payload = 200
    @Option(help: "Run only one side (agent or bare), for profiling one publisher under callgrind or perf.")
    var only: Side?
    @Flag(
        help: """
            TCP_NODELAY on the bare publisher's socket too, as the agent's client sets it for latency (by default \
            the bare library keeps Nagle, which batches its writes: the stricter reference).
            """
    )
    var bareNoDelay = false

    enum Side: String, ExpressibleByArgument, Sendable {
        case agent
        case bare
    }

    func run() async throws {
        let rows = try await Self.measure(
            counts: [messagesQos0, messagesQos1],
            runs: runs,
            window: window,
            payloadBytes: payload,
            only: only,
            bareNoDelay: bareNoDelay
        )
        BenchRow.printTable("Publishing into mosquitto on loopback (\(payload)-byte payloads, window \(window))", rows)
    }

    static func measure(
        counts: [Int],
        runs: Int,
        window: Int,
        payloadBytes: Int,
        only: Side? = nil,
        bareNoDelay: Bool = false
    ) async throws -> [BenchRow] {
        try await MosquittoBroker.withStarted(options: .benchmark()) { broker in
            try await measure(
                broker,
                counts: counts,
                runs: runs,
                window: window,
                payloadBytes: payloadBytes,
                only: only,
                bareNoDelay: bareNoDelay
            )
        }
    }

    private static func measure(
        _ broker: MosquittoBroker,
        counts: [Int],
        runs: Int,
        window: Int,
        payloadBytes: Int,
        only: Side?,
        bareNoDelay: Bool
    ) async throws -> [BenchRow] {
        let subscriber = try BareSubscriber(host: broker.host, port: broker.port, clientID: "bench-counter")
        try subscriber.subscribe("bench/#", qos: 1)
        var payload = [UInt8](repeating: UInt8(ascii: "x"), count: payloadBytes)
        payload[0] = UInt8(ascii: "{")
        payload[payloadBytes - 1] = UInt8(ascii: "}")
        var rows: [BenchRow] = []
        for qos in [0, 1] where counts[qos] > 0 {
            let count = counts[qos]
            var agentSeries = RunSeries(side: .agent)
            var bareSeries = RunSeries(side: .bare)
            let agentSide = { (count: Int) in
                try await agentRun(broker, subscriber, qos: qos, count: count, window: window, payload: payload)
            }
            let bareSide = { (count: Int) in
                try bareRun(
                    broker,
                    subscriber,
                    qos: qos,
                    count: count,
                    window: window,
                    payload: payload,
                    noDelay: bareNoDelay
                )
            }
            // Warm-up, not recorded: the broker's and the library's first-use costs (session set-up, page faults
            // of fresh buffers, lazily resolved symbols) would otherwise land on whichever side runs first.
            let warmUp = max(1, count / 5)
            if only != .bare { _ = try await agentSide(warmUp) }
            if only != .agent { _ = try bareSide(warmUp) }
            for run in 0..<max(1, runs) {
                // Alternate which goes first, so a drift in the machine's load does not favour one side.
                for agentFirst in [run % 2 == 0, run % 2 != 0] {
                    if only == (agentFirst ? .bare : .agent) { continue }
                    if agentFirst {
                        try await agentSeries.record(qos: qos, run: run, count: count) { try await agentSide(count) }
                    } else {
                        try await bareSeries.record(qos: qos, run: run, count: count) { try bareSide(count) }
                    }
                }
            }
            let agentRates = agentSeries.rates
            let bareRates = bareSeries.rates
            let agent = Statistics.median(agentRates)
            let bare = Statistics.median(bareRates)
            let list: ([Double]) -> String = { $0.map { String(format: "%.0f", $0) }.joined(separator: " ") }
            if only != .bare {
                rows.append(
                    BenchRow(
                        name: "publish QoS \(qos) agent path",
                        value: String(format: "%.0f msg/s", agent),
                        target: "runs " + list(agentRates)
                    )
                )
            }
            if only != .agent {
                rows.append(
                    BenchRow(
                        name: "publish QoS \(qos) bare libmosquitto" + (bareNoDelay ? " (TCP_NODELAY)" : ""),
                        value: String(format: "%.0f msg/s", bare),
                        target: "runs " + list(bareRates)
                    )
                )
            }
            if only == nil {
                let ratio = agent / bare
                // Also the ratio of the alternating pairs one by one: how much of the spread is the machine.
                let pairs = zip(agentRates, bareRates).map { $0 / $1 }
                rows.append(
                    BenchRow(
                        name: "publish QoS \(qos) ratio agent/bare",
                        value: String(format: "%.2f", ratio),
                        target: "≥ 0.80 (pairs " + pairs.map { String(format: "%.2f", $0) }.joined(separator: " ")
                            + ")",
                        met: ratio >= 0.8
                    )
                )
            }
            rows.append(
                BenchRow(
                    name: "publish QoS \(qos) allocations/message agent, bare",
                    value: String(
                        format: "%.1f, %.1f",
                        Statistics.median(agentSeries.allocationsPerMessage),
                        Statistics.median(bareSeries.allocationsPerMessage)
                    ),
                    target: "whole process, incl. the subscriber's receiving and set-up"
                )
            )
            rows.append(
                BenchRow(
                    name: "publish QoS \(qos) CPU µs/message agent, bare",
                    value: String(
                        format: "%.2f, %.2f",
                        Statistics.median(agentSeries.cpuMicrosecondsPerMessage),
                        Statistics.median(bareSeries.cpuMicrosecondsPerMessage)
                    ),
                    target: "this process (user + system) over the timed window, incl. the subscriber; not the broker"
                )
            )
            for note in agentSeries.notes + bareSeries.notes {
                rows.append(BenchRow(name: "  note QoS \(qos)", value: note))
            }
        }
        return rows
    }

    /// The agent's path: a connected publisher thread draining the outbox while `count` messages are enqueued.
    static func agentRun(
        _ broker: MosquittoBroker,
        _ subscriber: BareSubscriber,
        qos: Int,
        count: Int,
        window: Int,
        payload: [UInt8]
    ) async throws -> (rate: Double, cpuMicrosecondsPerMessage: Double, note: String?) {
        var logger = Logger(label: "motion-bench.publish")
        logger.logLevel = .error
        let outbox = Outbox(capacityBytes: max(4 << 20, count * (payload.count + 8)), capacityMessages: count + 16)
        let topics = TopicTable()
        let topicID = topics.id(for: "bench/agent")
        let client = MosquittoClient(logger: logger)
        let publisher = OutboxPublisher(outbox: outbox, topics: topics, broker: client, window: window, logger: logger)
        let connected = AsyncStream<Void>.makeStream()
        // As the agent's connection supervisor does: CONNACK opens the publisher (its acknowledgements come
        // straight from the client, as the publisher's `start` arranges).
        let events = Task {
            for await event in client.events {
                if case .connected = event { connected.continuation.yield() }
            }
        }
        publisher.start()
        try client.connect(
            BrokerConnectOptions(
                host: broker.host,
                port: broker.port,
                clientID: "bench-agent",
                maxInflightMessages: window
            )
        )
        var iterator = connected.stream.makeAsyncIterator()
        _ = await iterator.next()
        publisher.setConnected(true)
        subscriber.reset(recordLatencies: false)
        // The streams' side of the path: messages enqueued as fast as this thread can, while the publisher
        // thread (connected, waiting on the empty outbox) drains them.
        let cpuStart = processCPUSeconds()
        let start = bench_monotonic_ns()
        payload.withUnsafeBytes { bytes in
            for _ in 0..<count { outbox.enqueue(topicID: topicID, qos: qos, retain: false, payload: bytes) }
        }
        let end = subscriber.wait(for: UInt64(count), timeout: 120)
        let cpu = (processCPUSeconds() - cpuStart) / Double(count) * 1e6
        let received = subscriber.count
        await publisher.stop(drainTimeout: 0)
        await client.disconnect(flushTimeout: 1)
        events.cancel()
        let counters = outbox.snapshot
        let rate = Double(received) / (Double(end - start) / 1e9)
        var note: String?
        if received < UInt64(count) || counters.failed > 0 || counters.droppedOverflow > 0 {
            note = "\(received) of \(count) arrived, \(counters.failed) refused, \(counters.droppedOverflow) dropped"
        }
        return (rate, cpu, note)
    }

    /// The bare library: the same count, window and (for QoS 0) the agent client's 20 000-message queue bound.
    static func bareRun(
        _ broker: MosquittoBroker,
        _ subscriber: BareSubscriber,
        qos: Int,
        count: Int,
        window: Int,
        payload: [UInt8],
        noDelay: Bool
    ) throws -> (rate: Double, cpuMicrosecondsPerMessage: Double, note: String?) {
        let publisher = try BarePublisher(
            host: broker.host,
            port: broker.port,
            clientID: "bench-bare",
            window: window,
            noDelay: noDelay
        )
        defer { publisher.close() }
        subscriber.reset(recordLatencies: false)
        let cpuStart = processCPUSeconds()
        let start = bench_monotonic_ns()
        var failure: String?
        do {
            try payload.withUnsafeBytes { bytes in
                try publisher.publish(
                    topic: "bench/bare",
                    payload: bytes,
                    qos: qos,
                    count: count,
                    limit: qos > 0 ? window : 20_000
                )
            }
        } catch {
            failure = "\(error)"
        }
        let end = subscriber.wait(for: UInt64(count), timeout: 120)
        let cpu = (processCPUSeconds() - cpuStart) / Double(count) * 1e6
        let received = subscriber.count
        let rate = Double(received) / (Double(end - start) / 1e9)
        var note: String?
        if failure != nil || received < UInt64(count) {
            note = "\(received) of \(count) arrived" + (failure.map { " (\($0))" } ?? "")
        }
        return (rate, cpu, note)
    }
}

extension PublishThroughput {
    /// User + system CPU seconds of the whole process so far: CPU per message is steadier than messages/s on
    /// a shared machine, where waiting for the CPU shows up in the rate but not here.
    static func processCPUSeconds() -> Double {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        let user = Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6
        let system = Double(usage.ru_stime.tv_sec) + Double(usage.ru_stime.tv_usec) / 1e6
        return user + system
    }
}
