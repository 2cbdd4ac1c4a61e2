import AgentPorts
import Foundation
import MosquittoTransport
import TestSupport
import Testing

/// Acknowledgements on their own path: a flood on the control topic cannot starve the durable stream's
/// QoS 1 window or its log's cursor. Counts and sequence continuity, no timings.
@Suite(.serialized) struct ControlFloodEndToEndTests {
    static let floodCount = 50_000

    /// Publishes `count` commands on `topic` at QoS 0 as fast as the client takes them (waiting when its own
    /// queue is full, and a millisecond every 1000 so the other tests' tasks get the shared threads: a
    /// publish never suspends).
    static func flood(_ client: MosquittoClient, topic: String, count: Int) async throws {
        var sent = 0
        while sent < count {
            let payload = Array(#"{"id":"flood-\#(sent)","command":"status"}"#.utf8)
            do {
                _ = try payload.withUnsafeBytes { try client.publish(topic: topic, payload: $0, qos: 0, retain: false) }
                sent += 1
                if sent % 1000 == 0 { try await Task.sleep(for: .milliseconds(1)) }
            } catch {
                try await Task.sleep(for: .milliseconds(1))
            }
        }
    }

    @Test func aControlFloodDuringADurableQoS1StreamLosesNothingAndStallsNothing() async throws {
        let broker = try await MosquittoBroker.started()
        let device = "flood"
        let subscriber = try await ReliabilityEndToEndTests.PersistentSubscriber(broker, device: device)
        let metrics = try await TestSubscriber(broker: broker, filters: ["motion/\(device)/metrics"])
        let agent = try AgentProcess(
            config: ReliabilityEndToEndTests.config(
                device: device,
                port: broker.port,
                extra: """
                    metrics:
                      interval_s: 1
                    """
            )
        )
        #expect(
            await ReliabilityEndToEndTests.wait(timeout: 20) { subscriber.seqs(device).count >= 200 },
            "agent log: \(agent.runner.standardError.suffix(3000))"
        )

        let flooder = MosquittoClient()
        let log = Task {
            for await event in flooder.events { if case .connectFailed = event { return } }
        }
        try flooder.connect(broker.connectOptions(clientID: "flooder"))
        #expect(await ReliabilityEndToEndTests.wait(timeout: 10) { flooder.isConnected })
        let beforeFlood = subscriber.seqs(device).max() ?? 0
        try await Self.flood(flooder, topic: TopicScheme(root: "motion/\(device)").control, count: Self.floodCount)
        await flooder.disconnect(flushTimeout: 10)
        log.cancel()

        // Stalls nothing: the stream runs on past the flood, live again.
        #expect(
            await ReliabilityEndToEndTests.wait(timeout: 30) {
                (subscriber.seqs(device).max() ?? 0) > beforeFlood + 400
                    && ReliabilityEndToEndTests.caughtUp(subscriber, device)
            },
            "the durable stream stalled after the flood; agent log: \(agent.runner.standardError.suffix(3000))"
        )
        // The flood was counted by the metrics, whatever part of it the agent could not take.
        #expect(
            await ReliabilityEndToEndTests.wait(timeout: 10) {
                metrics.messages.map(payloadJSON).contains {
                    ($0["connection"] as? [String: Any])?["inboundDropped"] is Int
                }
            }
        )
        let dropped =
            metrics.messages.map(payloadJSON).compactMap {
                ($0["connection"] as? [String: Any])?["inboundDropped"] as? Int
            }.max() ?? -1

        let outbox = try await ReliabilityEndToEndTests.stop(agent, subscriber, device: device)
        let seqs = subscriber.seqs(device)
        let appended = try #require(outbox["durableAppended"] as? Int)
        let unique = Set(seqs)
        let lost = (1...appended).filter { !unique.contains($0) }.count
        print(
            "flood: \(Self.floodCount) control messages during 200 Hz QoS 1 durable: sent \(appended), received \(seqs.count), unique \(unique.count), lost \(lost), inbound dropped \(dropped)"
        )
        // Loses nothing: every seq from 1 to the last appended arrived.
        #expect(lost == 0)
        #expect(unique.count == appended && unique.min() == 1 && unique.max() == appended)
        // Stalls nothing: every record was acknowledged and the log's cursor reached its end.
        #expect(outbox["durableDepth"] as? Int == 0)
        #expect(outbox["durableAcknowledged"] as? Int == appended)
        #expect(outbox["durableDropped"] as? Int == 0)
        await metrics.close()
        await subscriber.subscriber.close()
        await broker.stop()
    }
}
