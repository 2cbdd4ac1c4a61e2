import AgentCore
import ArgumentParser
import CBenchSupport
import Foundation
import Logging
import MosquittoTransport

/// Messages/s into a real mosquitto on loopback, 200-byte payloads, QoS 0 and 1: the agent's path (Outbox →
/// OutboxPublisher → MosquittoClient, wired as MotionAgent wires them) against a bare libmosquitto publisher
/// in C, same run, same broker, same in-flight window. Every message is counted at a subscriber.
struct PublishThroughput: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "publish",
        abstract: "Messages/s into a local mosquitto: agent path vs bare libmosquitto, QoS 0 and 1."
    )

    @Option(help: "Messages per QoS 0 run.") var messagesQos0 = 50_000
    @Option(help: "Messages per QoS 1 run.") var messagesQos1 = 20_000
    @Option(help: "Runs per publisher and QoS (alternating); medians are reported.") var runs = 3
    @Option(help: "Max in-flight QoS > 0 messages (mqtt.max_inflight).") var window = 100
    @Option(help: "Payload bytes.") var payload = 200

    func run() async throws {
        let rows = try await Self.measure(
            counts: [messagesQos0, messagesQos1],
            runs: runs,
            window: window,
            payloadBytes: payload
        )
        BenchRow.printTable("Publishing into mosquitto on loopback (\(payload)-byte payloads, window \(window))", rows)
    }

    static func measure(counts: [Int], runs: Int, window: Int, payloadBytes: Int) async throws -> [BenchRow] {
        let broker = try BenchBroker()
        defer { broker.stop() }
        let subscriber = try BenchSubscriber(broker: broker, clientID: "bench-counter")
        try subscriber.subscribe("bench/#", qos: 1)
        var payload = [UInt8](repeating: UInt8(ascii: "x"), count: payloadBytes)
        payload[0] = UInt8(ascii: "{")
        payload[payloadBytes - 1] = UInt8(ascii: "}")
        var rows: [BenchRow] = []
        for qos in [0, 1] {
            let count = counts[qos]
            var agentRates: [Double] = []
            var bareRates: [Double] = []
            var notes: [String] = []
            var agentAllocations: [Double] = []
            var bareAllocations: [Double] = []
            for run in 0..<max(1, runs) {
                // Alternate which goes first, so a drift in the machine's load does not favour one side.
                for agentFirst in [run % 2 == 0, run % 2 != 0] {
                    if agentFirst {
                        let allocationsBefore = bench_alloc_total()
                        let (rate, note) = try await agentRun(
                            broker,
                            subscriber,
                            qos: qos,
                            count: count,
                            window: window,
                            payload: payload
                        )
                        agentAllocations.append(Double(bench_alloc_total() - allocationsBefore) / Double(count))
                        agentRates.append(rate)
                        progress("publish QoS \(qos) agent run \(run + 1): \(Int(rate)) msg/s \(note ?? "")")
                        if let note { notes.append("agent: " + note) }
                    } else {
                        let allocationsBefore = bench_alloc_total()
                        let (rate, note) = try bareRun(
                            broker,
                            subscriber,
                            qos: qos,
                            count: count,
                            window: window,
                            payload: payload
                        )
                        bareAllocations.append(Double(bench_alloc_total() - allocationsBefore) / Double(count))
                        bareRates.append(rate)
                        progress("publish QoS \(qos) bare run \(run + 1): \(Int(rate)) msg/s \(note ?? "")")
                        if let note { notes.append("bare: " + note) }
                    }
                }
            }
            let agent = Statistics.median(agentRates)
            let bare = Statistics.median(bareRates)
            let ratio = agent / bare
            let list: ([Double]) -> String = { $0.map { String(format: "%.0f", $0) }.joined(separator: " ") }
            rows.append(
                BenchRow(
                    name: "publish QoS \(qos) agent path",
                    value: String(format: "%.0f msg/s", agent),
                    target: "runs " + list(agentRates)
                )
            )
            rows.append(
                BenchRow(
                    name: "publish QoS \(qos) bare libmosquitto",
                    value: String(format: "%.0f msg/s", bare),
                    target: "runs " + list(bareRates)
                )
            )
            rows.append(
                BenchRow(
                    name: "publish QoS \(qos) ratio agent/bare",
                    value: String(format: "%.2f", ratio),
                    target: "≥ 0.80",
                    met: ratio >= 0.8
                )
            )
            rows.append(
                BenchRow(
                    name: "publish QoS \(qos) allocations/message agent, bare",
                    value: String(
                        format: "%.1f, %.1f",
                        Statistics.median(agentAllocations),
                        Statistics.median(bareAllocations)
                    ),
                    target: "whole process, incl. the subscriber's receiving and set-up"
                )
            )
            for note in notes { rows.append(BenchRow(name: "  note QoS \(qos)", value: note)) }
        }
        return rows
    }

    /// The agent's path: the outbox filled with `count` messages, then the publisher thread switched on.
    static func agentRun(
        _ broker: BenchBroker,
        _ subscriber: BenchSubscriber,
        qos: Int,
        count: Int,
        window: Int,
        payload: [UInt8]
    ) async throws -> (Double, String?) {
        var logger = Logger(label: "motion-bench.publish")
        logger.logLevel = .error
        let outbox = Outbox(capacityBytes: max(4 << 20, count * (payload.count + 8)), capacityMessages: count + 16)
        let topics = TopicTable()
        let topicID = topics.id(for: "bench/agent")
        payload.withUnsafeBytes { bytes in
            for _ in 0..<count { outbox.enqueue(topicID: topicID, qos: qos, retain: false, payload: bytes) }
        }
        let client = MosquittoClient(logger: logger)
        let publisher = OutboxPublisher(outbox: outbox, topics: topics, broker: client, window: window, logger: logger)
        let connected = AsyncStream<Void>.makeStream()
        // As MotionAgent.superviseConnection does: CONNACK opens the publisher, each ack returns a window slot.
        let events = Task {
            for await event in client.events {
                switch event {
                case .connected:
                    connected.continuation.yield()
                case .delivered(let id):
                    publisher.acknowledged(messageID: id)
                default:
                    break
                }
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
        subscriber.reset(recordLatencies: false)
        let start = bench_monotonic_ns()
        publisher.setConnected(true)
        let end = subscriber.wait(for: UInt64(count), timeout: 120)
        let received = subscriber.count
        await publisher.stop(drainTimeout: 0)
        await client.disconnect(flushTimeout: 1)
        events.cancel()
        let counters = outbox.snapshot
        let rate = Double(received) / (Double(end - start) / 1e9)
        var note: String?
        if received < UInt64(count) || counters.failed > 0 {
            note = "\(received) of \(count) arrived, \(counters.failed) refused"
        }
        if client.droppedEventCount > 0 {
            note = (note.map { $0 + "; " } ?? "") + "\(client.droppedEventCount) delivery events dropped"
        }
        return (rate, note)
    }

    /// The bare library: the same count, window and (for QoS 0) the agent client's 20 000-message queue bound.
    static func bareRun(
        _ broker: BenchBroker,
        _ subscriber: BenchSubscriber,
        qos: Int,
        count: Int,
        window: Int,
        payload: [UInt8]
    ) throws -> (Double, String?) {
        var error = [CChar](repeating: 0, count: 256)
        guard
            let publisher = bench_pub_open(
                broker.host,
                Int32(broker.port),
                "bench-bare",
                Int32(window),
                1,
                0,
                10,
                &error,
                error.count
            )
        else {
            throw BenchBroker.StartError(description: BenchBroker.text(error))
        }
        defer { bench_pub_close(publisher) }
        subscriber.reset(recordLatencies: false)
        let start = bench_monotonic_ns()
        let rc = payload.withUnsafeBytes { bytes in
            bench_pub_run(
                publisher,
                "bench/bare",
                bytes.baseAddress,
                Int32(bytes.count),
                Int32(qos),
                count,
                Int32(qos > 0 ? window : 20_000)
            )
        }
        let end = subscriber.wait(for: UInt64(count), timeout: 120)
        let received = subscriber.count
        let rate = Double(received) / (Double(end - start) / 1e9)
        var note: String?
        if rc != 0 || received < UInt64(count) { note = "\(received) of \(count) arrived (rc \(rc))" }
        return (rate, note)
    }
}
