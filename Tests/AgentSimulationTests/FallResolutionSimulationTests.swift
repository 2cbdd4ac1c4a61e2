import AgentPorts
import AgentSimulation
import Foundation
import MemoryBroker
import MotionWire
import Testing

/// Issue 44's operator command in the whole agent: a fall (`ScriptedFall` in the virtual accelerometer) goes out
/// on the events stream, an operator's `confirm-fall` / `dismiss-fall` is answered with the follow-up and
/// publishes it, a second resolution is refused with 409, and a broker outage between the fall and its
/// resolution loses neither report (QoS 1, durable).
@Suite struct FallResolutionSimulationTests {
    static let events = TopicScheme(root: "motion/dev-fall").stream(.events)
    static let control = "motion/dev-fall/control"

    /// The fall reports on the events topic, in arrival order.
    static func falls(_ tool: SimulatedTool) -> [[String: Any]] {
        tool.json(on: events).filter { $0["kind"] as? String == "fall" }
    }

    static func world(
        persistentSubscriber: Bool
    ) throws -> (
        SimulationWorld, MemoryBroker, SimulatedAgent, subscriber: SimulatedTool, operator: SimulatedTool
    ) {
        let world = SimulationWorld()
        let broker = world.addBroker(name: "broker", options: .init(persistence: true))
        var fleet = SimulatedFleetConfiguration()
        fleet.streams = [.init("events", rateHz: 50, qos: 1, durable: true)]
        let device = world.addDevice("dev-fall", configuration: try fleet.configuration(deviceID: "dev-fall"), seed: 5)
        let subscriber = try SimulatedTool(
            world,
            clientID: "subscriber",
            cleanSession: !persistentSubscriber,
            subscribe: [events]
        )
        let tool = try SimulatedTool(world, clientID: "operator")
        world.start(device)
        #expect(tool.waitUntil(timeout: 10) { tool.status("dev-fall")?.state == .online })
        return (world, broker, device, subscriber, tool)
    }

    @Test func aFallIsConfirmedByAnOperatorOnceAndTheFollowUpIsPublished() throws {
        let (world, _, device, subscriber, tool) = try Self.world(persistentSubscriber: false)
        let refusedEarly = try #require(try tool.send(Self.control, #"{"id": "c0", "command": "confirm-fall"}"#).first)
        #expect(refusedEarly.code == 409 && !refusedEarly.ok, "no fall yet: \(refusedEarly)")
        #expect(refusedEarly.message.contains("no fall awaits a resolution"), "\(refusedEarly.message)")

        let process = try #require(device.process)
        process.source.script(ScriptedFall(start: world.clock.monotonicSeconds() + 2))
        #expect(subscriber.waitUntil(timeout: 10) { Self.falls(subscriber).count == 1 })
        let first = try #require(Self.falls(subscriber).first)
        #expect(first["resolution"] is NSNull, "the first report has no resolution: \(first)")
        let date = try #require(first["date"] as? Double)

        // With the date of the report the operator saw: only that fall is confirmed.
        let replies = try tool.send(Self.control, #"{"id": "c1", "command": "confirm-fall", "date": \#(date)}"#)
        let reply = try #require(replies.first)
        #expect(replies.count == 1 && reply.ok && reply.code == 200 && reply.id == "c1", "\(reply)")
        guard case .fall(let resolved)? = reply.result else {
            Issue.record("confirm-fall's reply has no fall: \(reply)")
            return
        }
        #expect(resolved.resolution == .confirmed && abs(resolved.date - date) < 0.001)
        #expect(subscriber.waitUntil(timeout: 5) { Self.falls(subscriber).count == 2 })
        let followUp = try #require(Self.falls(subscriber).last)
        #expect(followUp["resolution"] as? String == "confirmed" && followUp["date"] as? Double == date)

        // Resolved: dismissing it too is refused, and the response window ends without another follow-up.
        let again = try #require(try tool.send(Self.control, #"{"id": "c2", "command": "dismiss-fall"}"#).first)
        #expect(again.code == 409 && !again.ok, "\(again)")
        world.run(for: 70)
        #expect(Self.falls(subscriber).count == 2, "\(Self.falls(subscriber))")
    }

    @Test func aBrokerOutageBetweenTheFallAndItsResolutionLosesNeither() throws {
        let (world, broker, device, subscriber, tool) = try Self.world(persistentSubscriber: true)
        let process = try #require(device.process)
        // The fall happens while the broker is away; the operator dismisses it once the broker is back (the
        // command path needs the broker), before the subscriber has even seen the fall.
        broker.stop()
        let outage = world.clock.monotonicSeconds()
        process.source.script(ScriptedFall(start: outage + 1))
        world.run(for: 8)
        #expect(Self.falls(subscriber).isEmpty, "the broker is away")
        broker.start()
        #expect(tool.waitUntil(timeout: 30) { tool.isConnected && tool.status("dev-fall")?.state == .online })
        let reply = try #require(try tool.send(Self.control, #"{"id": "d1", "command": "dismiss-fall"}"#).first)
        #expect(reply.ok && reply.code == 200, "\(reply)")
        #expect(subscriber.waitUntil(timeout: 30) { Self.falls(subscriber).count >= 2 })
        world.run(for: 5)
        let falls = Self.falls(subscriber)
        #expect(falls.map { $0["resolution"] as? String } == [nil, "dismissed"], "\(falls)")
        #expect(Set(falls.compactMap { $0["date"] as? Double }).count == 1, "one fall, twice: \(falls)")
    }

    /// A restart between a fall and its resolution does not forget the fall (`pending-fall.json`): the next
    /// process watches it for the rest of its response window (60 s from its detection) and publishes its one
    /// follow-up with the first report's date — `unresponsive` when nothing moves; past the window, at once. The
    /// process ends by SIGKILL or a power cut.
    @Test(arguments: [(10.0, false), (80.0, false), (10.0, true)])
    func aRestartKeepsTheFallAwaitingItsResolution(downSeconds: Double, powerCut: Bool) throws {
        let (world, _, device, subscriber, _) = try Self.world(persistentSubscriber: false)
        let process = try #require(device.process)
        process.source.script(ScriptedFall(start: world.clock.monotonicSeconds() + 2))
        #expect(subscriber.waitUntil(timeout: 10) { Self.falls(subscriber).count == 1 })
        let detected = world.clock.monotonicSeconds()
        let date = try #require(Self.falls(subscriber).first?["date"] as? Double)
        world.run(for: 5)
        if powerCut { world.powerCut(device) { _ in 0 } } else { world.kill(device) }
        world.run(for: downSeconds)
        world.start(device)
        #expect(subscriber.waitUntil(timeout: 90) { Self.falls(subscriber).count == 2 })
        let resolvedAfter = world.clock.monotonicSeconds() - detected
        let followUp = try #require(Self.falls(subscriber).last)
        #expect(followUp["resolution"] as? String == "unresponsive", "\(followUp)")
        #expect(followUp["date"] as? Double == date, "the first report's date: \(followUp)")
        let restartedAfter = 5 + downSeconds
        if restartedAfter < 60 {
            #expect((59...62).contains(resolvedAfter), "unresponsive \(resolvedAfter) s after the report")
        } else {
            #expect(
                (restartedAfter...(restartedAfter + 3)).contains(resolvedAfter),
                "unresponsive at the restart, \(resolvedAfter) s after the report"
            )
        }
        // One follow-up: a further restart finds nothing to watch. (Killed at once, the durable log may send the
        // follow-up again, the same message: QoS 1 is at least once.)
        world.kill(device)
        world.start(device)
        world.run(for: 70)
        let distinct = Set(Self.falls(subscriber).map { NSDictionary(dictionary: $0) })
        #expect(distinct.count == 2, "\(Self.falls(subscriber))")
    }

    /// The detector's settings are runtime settings: a device desired document that shortens the response
    /// window to 10 s and switches impacts off makes a fall nobody answers `unresponsive` 10 s after its
    /// detection, with no impact report; without it the same fall brings an impact and waits 60 s.
    @Test(arguments: [true, false]) func aDesiredDocumentRetunesTheDetector(_ retuned: Bool) throws {
        let (world, _, device, subscriber, tool) = try Self.world(persistentSubscriber: false)
        if retuned {
            try tool.publish(
                "motion/dev-fall/desired",
                #"{"version": 1, "streams": {"events": {"fall_response_s": 10, "impacts": false}}}"#,
                retain: true
            )
            #expect(
                tool.waitUntil(timeout: 10) {
                    tool.status("dev-fall")?.configuration?.desired["device"] == 1
                },
                "the device applies the document"
            )
        }
        let process = try #require(device.process)
        process.source.script(ScriptedFall(start: world.clock.monotonicSeconds() + 2))
        #expect(subscriber.waitUntil(timeout: 10) { Self.falls(subscriber).count == 1 })
        let detected = world.clock.monotonicSeconds()
        #expect(subscriber.waitUntil(timeout: 70) { Self.falls(subscriber).count == 2 })
        let resolvedAfter = world.clock.monotonicSeconds() - detected
        #expect(Self.falls(subscriber).last?["resolution"] as? String == "unresponsive")
        let impacts = subscriber.json(on: Self.events).filter { $0["kind"] as? String == "impact" }
        if retuned {
            #expect((9...12).contains(resolvedAfter), "unresponsive \(resolvedAfter) s after the report")
            #expect(impacts.isEmpty, "impacts are off: \(impacts)")
        } else {
            #expect((59...62).contains(resolvedAfter), "unresponsive \(resolvedAfter) s after the report")
            #expect(impacts.count == 1, "the fall's impact: \(impacts)")
        }
    }
}
