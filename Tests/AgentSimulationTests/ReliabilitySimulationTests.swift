import AgentConfig
import AgentPorts
import AgentSimulation
import Foundation
import MemoryBroker
import MotionWire
import Testing

/// The durable outbox on virtual time (moved from ReliabilityEndToEndTests, issue 40): a broker outage, a killed
/// agent, a full outbox and a refused account, each with exact counts. A durable 200 Hz QoS 1 accelerometer
/// stream and nothing else, so the payload's seq is the log's. Figures are printed with the prefix
/// `reliability (simulated):`.
@Suite struct ReliabilitySimulationTests {
    typealias Scenario = DeliveryScenario

    static let topic = "motion/rel/accelerometer"

    /// The end-to-end tests' configuration: 200 Hz durable QoS 1, replayed at 500 messages/s, reconnecting
    /// within a second.
    static func configuration(
        maxBytes: Int = 8 << 20,
        adding: [(path: String, value: String)] = []
    ) throws
        -> AgentConfiguration
    {
        var fleet = SimulatedFleetConfiguration()
        fleet.streams = [.init("accelerometer", rateHz: 200, qos: 1, durable: true)]
        fleet.outboxMaxBytes = maxBytes
        fleet.reconnectMaxDelay = 1
        return try fleet.configuration(deviceID: "rel", adding: [("outbox.replay_rate", "500")] + adding)
    }

    /// A subscriber whose session (QoS 1 subscription and queued messages) the broker keeps while it is away.
    static func subscriber(_ world: SimulationWorld) throws -> DeliveryPersistentSubscriber {
        try DeliveryPersistentSubscriber(world, clientID: "rel-sub", subscribe: [topic, "motion/rel/status"])
    }

    @Test func aTenSecondBrokerOutageLosesNothing() throws {
        let world = SimulationWorld()
        let broker = world.addBroker(name: "broker", options: .init(persistence: true))
        let subscriber = try Self.subscriber(world)
        let device = world.addDevice("rel", configuration: try Self.configuration(), seed: 11)
        world.start(device)
        #expect(subscriber.waitUntil(timeout: 15) { Scenario.seqs(subscriber, Self.topic).count >= 400 })

        // Killed for 10 s mid-stream (the session survives in the broker's store).
        broker.kill()
        subscriber.leave()
        let beforeOutage = Scenario.seqs(subscriber, Self.topic).count
        let birthsBefore = Scenario.births(subscriber, "rel").count
        world.run(for: 10)
        let back = world.now
        broker.start()
        try subscriber.comeBack()
        #expect(subscriber.waitUntil(timeout: 10) { Scenario.births(subscriber, "rel").count > birthsBefore })
        let reconnected = world.now - back
        #expect(Scenario.seqs(subscriber, Self.topic).count > beforeOutage)
        // 10 s at 200 Hz is a 2000-message backlog, replayed at 500/s beside the live 200/s.
        #expect(subscriber.waitUntil(timeout: 30) { Scenario.caughtUp(subscriber, Self.topic) })
        let recovery = world.now - back
        #expect(
            subscriber.waitUntil(timeout: 30) { Scenario.drained(Scenario.seqs(subscriber, Self.topic)) },
            "the backlog did not drain"
        )
        let outbox = try #require(Scenario.stop(world, device, subscriber), "no goodbye")

        let seqs = Scenario.seqs(subscriber, Self.topic)
        let appended = Int(try #require(outbox.durableAppended))
        let unique = Set(seqs)
        let duplicates = seqs.count - unique.count
        let lost = Scenario.missing(seqs, upTo: appended).count
        print(
            "reliability (simulated): broker outage 10 s at 200 Hz QoS 1 durable: sent \(appended), received \(seqs.count), unique \(unique.count), lost \(lost), duplicated \(duplicates), agent reconnected \(reconnected) s, caught up with live data \(recovery) s (both from the broker's start)"
        )
        #expect(appended > beforeOutage + 2000, "10 s at 200 Hz were taken while the broker was away")
        #expect(outbox.durableDepth == 0)
        #expect(outbox.durableDropped == 0)
        #expect(lost == 0)
        #expect(unique.count == appended && unique.min() == 1 && unique.max() == appended)
        // QoS 1 duplicates only come from resends of unacknowledged messages: at most one window's worth.
        #expect(duplicates <= 100)
        // The persistent subscriber's session held everything it was owed: the broker dropped nothing for it.
        #expect(broker.drops(clientID: "rel-sub").total == 0)
        // Reconnected within the back-off's bound (reconnect_max_delay 1 s) of the broker's return.
        #expect(reconnected <= 1.5)
    }

    @Test func messagesOfAKilledAgentArriveAfterItsRestart() throws {
        let world = SimulationWorld()
        let broker = world.addBroker(name: "broker", options: .init(persistence: true))
        let subscriber = try Self.subscriber(world)
        broker.stop()
        subscriber.leave()

        // The broker is down: everything piles up in the durable log; then SIGKILL.
        let device = world.addDevice("rel", configuration: try Self.configuration(), seed: 12)
        world.start(device)
        world.run(for: 3)
        world.kill(device)
        // What the killed agent left on disk: every record it wrote, none acknowledged.
        let left = device.disk.records
        let unsent = left.count
        #expect(left.allSatisfy { $0.fate == .written && $0.topic == Self.topic })
        let written = left.compactMap { Scenario.json($0.payload)["seq"] as? Int }
        #expect(written == Array(1...max(1, unsent)))
        #expect(unsent >= 500, "3 s at 200 Hz should have left about 600 messages, left \(unsent)")

        broker.start()
        try subscriber.comeBack()
        world.start(device)
        // The first run's messages come first, in order, then the second run's (whose seq restarts at 1).
        #expect(subscriber.waitUntil(timeout: 20) { Scenario.seqs(subscriber, Self.topic).count > unsent + 50 })
        let outbox = try #require(Scenario.stop(world, device, subscriber), "no goodbye")
        let seqs = Scenario.seqs(subscriber, Self.topic)
        let firstRun = Array(seqs.prefix(unsent))
        print(
            "reliability (simulated): agent SIGKILLed with the broker down: \(unsent) unsent on disk, first run's received \(firstRun.count), then the second run's from seq \(seqs.dropFirst(unsent).first ?? -1)"
        )
        #expect(firstRun == Array(1...unsent))
        #expect(seqs.dropFirst(unsent).first == 1)
        // The second run sent all of its own too (its counters count from its start), once each, after the first
        // run's.
        let secondRun = Array(seqs.dropFirst(unsent))
        #expect(secondRun == Array(1...max(1, Int(outbox.durableAppended ?? 0))))
        #expect(outbox.durableDepth == 0)
        #expect(outbox.durableDropped == 0)
    }

    @Test func aFullOutboxDropsTheOldestAndCountsExactly() throws {
        let world = SimulationWorld()
        let broker = world.addBroker(name: "broker", options: .init(persistence: true))
        let subscriber = try Self.subscriber(world)
        broker.stop()
        subscriber.leave()

        // 64 KiB hold a few hundred messages: 6 s at 200 Hz (1200) overflow it.
        let device = world.addDevice("rel", configuration: try Self.configuration(maxBytes: 65_536), seed: 13)
        world.start(device)
        world.run(for: 6)
        broker.start()
        try subscriber.comeBack()
        #expect(subscriber.waitUntil(timeout: 15) { Scenario.caughtUp(subscriber, Self.topic) })
        let outbox = try #require(Scenario.stop(world, device, subscriber), "no goodbye")

        let seqs = Scenario.seqs(subscriber, Self.topic)
        let appended = Int(try #require(outbox.durableAppended))
        let dropped = Int(try #require(outbox.durableDropped))
        let delivered = Set(seqs).count
        print(
            "reliability (simulated): outbox bound 64 KiB, broker down 6 s: generated \(appended), delivered \(delivered), dropped \(dropped) (status)"
        )
        #expect(dropped > 0)
        #expect(outbox.durableDepth == 0)
        #expect(dropped == appended - delivered)
        // The oldest went: what arrived is the newest, 1 + dropped ... appended, without a gap. (On real parts an
        // in-flight window of older ones may also arrive; here nothing was handed to the client while the broker was
        // away, so the run is exact.)
        #expect(Set(seqs).sorted() == Array((dropped + 1)...appended))
        #expect(seqs.count == delivered, "duplicated: \(seqs.count - delivered)")
    }

    @Test func aRefusedAccountBacksOffAndSaysSoInTheHealthFile() throws {
        let world = SimulationWorld()
        world.addBroker(name: "broker", options: .init(users: ["rel-auth": "right"]))
        // The simulation gives the agent no password (the CLI reads mqtt.password_file), so the account is refused
        // as a wrong password is: a CONNACK refusal marked as authorization.
        var fleet = SimulatedFleetConfiguration()
        fleet.reconnectMaxDelay = 1
        let device = world.addDevice(
            "rel-auth",
            configuration: try fleet.configuration(deviceID: "rel-auth", adding: [("mqtt.username", "rel-auth")]),
            seed: 14
        )
        let tap = world.start(device) { SimulatedConnectTap(wrapping: $0, referrals: [:], executor: world.executor) }
        let health = { device.process?.host.health }
        #expect(world.run(until: { health()?.state == .refused }, timeout: 15))
        // Even with reconnect_max_delay 1 s, a refusal waits at least 60 s: over 25 s, one attempt.
        world.run(for: 25)
        let document = try #require(health())
        print(
            "reliability (simulated): refused account: \(tap.attempts.count) connection attempts in 25 s; health: \(document.state.rawValue), \(document.lastError ?? "")"
        )
        #expect(tap.attempts.count == 1)
        #expect(tap.attempts.first?.username == "rel-auth")
        #expect(device.isRunning)
        #expect(document.state == .refused)
        #expect(document.consecutiveFailures == 1)
        #expect(document.lastError?.contains("refused by the broker") == true)
        #expect(document.lastError?.contains("mqtt.password_file") == true)
        let retryTime = try #require(document.nextRetryTime)
        #expect(retryTime - document.time >= 60)
        // The next attempt comes when the health file said it would, and is refused the same way.
        #expect(world.run(until: { tap.attempts.count == 2 }, timeout: retryTime - world.clock.realtimeSeconds() + 2))
        #expect(abs(world.clock.realtimeSeconds() - retryTime) <= 0.1)
        #expect(world.run(until: { health()?.consecutiveFailures == 2 }, timeout: 1))
        #expect(health()?.state == .refused)
        world.terminate(device)
        #expect(world.run(until: { !device.isRunning }, timeout: 10))
        #expect(Scenario.endedCleanly(device))
        #expect(health()?.state == .stopped)
    }
}
