import AgentPorts
import AgentSimulation
import Foundation
import MemoryBroker
import MotionWire
import Testing

/// Issue 40's defect: a device desired document that made a stream durable was reported applied while the
/// durable log stayed closed, so an outage followed by a crash lost the outage's samples — and a restart with the
/// document kept did not open the log either.
@Suite struct DurableFromDesiredStateTests {
    /// Samples of `stream` that a broker took, by their `timestamp` (unique per sample).
    static func timestamps(_ tool: SimulatedTool, _ topic: String) -> Set<Double> {
        Set(
            tool.messages(on: topic).compactMap { message in
                (try? JSONSerialization.jsonObject(with: Data(message.payload)) as? [String: Any])?["timestamp"]
                    as? Double
            }
        )
    }

    @Test func aStreamMadeDurableByADesiredDocumentLosesNothingToAnOutageAndACrash() throws {
        let world = SimulationWorld()
        let broker = world.addBroker(name: "broker", options: .init(persistence: true))
        var fleet = SimulatedFleetConfiguration()
        fleet.streams = [.init("accelerometer", rateHz: 5, qos: 1, durable: false)]
        let device = world.addDevice("dev1", configuration: try fleet.configuration(deviceID: "dev1"), seed: 7)
        let topic = TopicScheme(root: "motion/dev1").stream(.accelerometer)
        let subscriber = try SimulatedTool(world, clientID: "subscriber", cleanSession: false, subscribe: [topic])
        let tool = try SimulatedTool(world, clientID: "operator")
        world.start(device)
        #expect(tool.waitUntil(timeout: 10) { tool.status("dev1")?.state == .online })

        try tool.publish(
            "motion/dev1/desired",
            #"{"version": 1, "streams": {"accelerometer": {"durable": true}}}"#,
            retain: true
        )
        #expect(
            tool.waitUntil(timeout: 10) {
                tool.configuration("dev1")?.settings["streams.accelerometer.durable"]?.value == "true"
            }
        )
        let account = try #require(tool.configuration("dev1")?.settings["streams.accelerometer.durable"])
        #expect(account.source == "device v1")
        #expect(account.note == nil, "the status claims durability with a note: \(account.note ?? "")")

        // The broker goes away for 6 s; the agent is killed while it is away, and started again once it is back.
        world.run(for: 5)
        broker.stop()
        let outageStart = world.clock.monotonicSeconds()
        world.run(for: 6)
        let outageEnd = world.clock.monotonicSeconds()
        world.kill(device)
        broker.start()
        world.start(device)
        #expect(subscriber.waitUntil(timeout: 30) { subscriber.isConnected })
        world.run(for: 20)

        let arrived = Self.timestamps(subscriber, topic)
        let taken = arrived.filter { $0 > outageStart + 0.3 && $0 < outageEnd - 0.3 }
        // 5 Hz for 6 s: about 30 samples were taken while the broker was away; every one must arrive.
        #expect(taken.count >= 25, "only \(taken.count) of the ~30 samples taken during the outage arrived")
        let expected = Int(((outageEnd - 0.3) - (outageStart + 0.3)) * 5)
        #expect(
            taken.count >= expected - 1,
            "\(taken.count) of the \(expected) samples taken during the outage arrived"
        )

        // After the restart the kept document still holds, and its log is open: a second outage and crash lose
        // nothing either.
        broker.stop()
        let second = world.clock.monotonicSeconds()
        world.run(for: 6)
        let secondEnd = world.clock.monotonicSeconds()
        world.kill(device)
        broker.start()
        world.start(device)
        world.run(for: 20)
        #expect(subscriber.waitUntil(timeout: 30) { subscriber.isConnected })
        world.run(for: 10)
        let later = Self.timestamps(subscriber, topic).filter { $0 > second + 0.3 && $0 < secondEnd - 0.3 }
        #expect(later.count >= 25, "after a restart with the kept document only \(later.count) of ~30 arrived")
    }
}
