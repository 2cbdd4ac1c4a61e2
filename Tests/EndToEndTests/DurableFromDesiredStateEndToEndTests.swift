import AgentPipeline
import Foundation
import Logging
import MotionWire
import Platform
import TestSupport
import Testing

/// Issue 40's defect as a user met it, with the real agent, a real broker and a real kill: a device desired
/// document makes the accelerometer durable (config.yaml says QoS 1, `durable: false`); the broker goes away,
/// the agent is SIGKILLed while it is away, and the samples taken during the outage must arrive after the
/// restart. Before the fix the status said `durable: true, source: device v1` and none of them did. The logic is
/// explored on virtual time (`DurableFromDesiredStateTests`, the explorer's saved seed); this is the same story
/// through the process, the file system and mosquitto.
@Suite(.timeLimit(.minutes(5)), .serialized) struct DurableFromDesiredStateEndToEndTests {
    static let streams = """
        streams:
          accelerometer: {enabled: true, rate_hz: 50, qos: 1, durable: false}
          gyroscope: {enabled: false}
          magnetometer: {enabled: false}
          device-motion: {enabled: false}
          pedometer: {enabled: false}
          activity: {enabled: false}
          altimeter: {enabled: false}
          submersion: {enabled: false}
        """

    /// The `time` of every accelerometer sample the subscriber received (wall-clock seconds, unique per sample).
    static func times(_ subscriber: CapturingSubscriber, _ device: String) -> [Double] {
        subscriber.messages(on: "motion/\(device)/accelerometer").compactMap { payloadJSON($0)["time"] as? Double }
    }

    /// What the agent's durable log under `directory` holds, read the way its next start reads it.
    static func depthOnDisk(_ directory: String) throws -> Int {
        let log = try DurableLog(
            storage: SegmentFiles(folder: directory + "/state/outbox"),
            maxBytes: 8_388_608,
            maxAgeSeconds: 3600,
            logger: Logger(label: "test")
        )
        defer { log.close() }
        return log.snapshot.depth
    }

    @Test func aStreamMadeDurableByADesiredDocumentKeepsAnOutageThroughAKill() async throws {
        let broker = try await MosquittoBroker.started(options: .init(persistence: true))
        let device = "e2e-durable-desired"
        let subscriber = try await ReliabilityEndToEndTests.PersistentSubscriber(broker, device: device)
        let account = try await CapturingSubscriber(
            options: broker.connectOptions(clientID: "durable-desired-status"),
            filters: ["motion/\(device)/configuration"]
        )
        try await DesiredStateEndToEndTests.publishRetained(
            broker,
            "motion/\(device)/desired",
            #"{"version": 1, "streams": {"accelerometer": {"durable": true}}}"#
        )
        let config = AgentProcess.config(device: device, port: broker.port, simulatedRateHz: 50, streams: Self.streams)
        let first = try AgentProcess(config: config)

        // The account says durable, from the device's document, with no note that it is not in force.
        try await account.waitUntil(timeout: 20, "streams.accelerometer.durable = true from device v1") { messages in
            let settings = messages.last.map(payloadJSON)?["settings"] as? [String: Any]
            let entry = settings?["streams.accelerometer.durable"] as? [String: Any]
            return entry?["value"] as? String == "true" && entry?["source"] as? String == "device v1"
                && entry?["note"] == nil
        }
        #expect(await Polling.until(timeout: 20) { Self.times(subscriber.subscriber, device).count >= 50 })

        // The broker away for 6 s; the agent killed while it is away.
        await broker.stop()
        let outageStart = Date().timeIntervalSince1970
        try await Task.sleep(for: .seconds(6))
        let outageEnd = Date().timeIntervalSince1970
        first.runner.kill()
        _ = await first.runner.waitForExit(timeout: 10)
        let unsent = try Self.depthOnDisk(first.directory)
        #expect(unsent >= 200, "6 s at 50 Hz with the broker away left only \(unsent) messages in the durable log")

        try await broker.start()
        try await subscriber.reconnect()
        let second = try AgentProcess(config: config, directory: first.directory)
        let window = (outageStart + 0.5)...(outageEnd - 0.5)
        let expected = Int((window.upperBound - window.lowerBound) * 50) - 2
        #expect(
            await Polling.until(timeout: 30) {
                Self.times(subscriber.subscriber, device).filter(window.contains).count >= expected
            },
            "of the ~\(expected) samples taken during the outage \(Self.times(subscriber.subscriber, device).filter(window.contains).count) arrived; agent log: \(second.runner.standardError.suffix(2000))"
        )
        _ = try await ReliabilityEndToEndTests.stop(second, subscriber, device: device)
        let arrived = Self.times(subscriber.subscriber, device).filter(window.contains)
        print(
            "durable from desired state: \(unsent) messages on disk at the kill, \(Set(arrived).count) of the outage's ~\(expected + 2) samples arrived after the restart"
        )
        await account.close()
        await subscriber.subscriber.close()
        await broker.stop()
    }
}
