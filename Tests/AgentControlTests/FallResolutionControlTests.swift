import AgentConfig
import AgentControl
import AgentPipeline
import AgentPorts
import Foundation
import Logging
import MotionModel
import MotionWire
import Testing

/// `confirm-fall` and `dismiss-fall` through the control door: answered with the follow-up the events stream
/// published, refused with 409 (naming what to do) when no fall awaits a resolution or the stream is off.
@Suite struct FallResolutionControlTests {
    struct Fixture {
        let plane: ControlPlane
        let hub: SensorHub
        let outbox: Outbox
    }

    private func fixture(eventsOn: Bool) throws -> Fixture {
        let outbox = Outbox(capacityBytes: 1 << 20, capacityMessages: 1 << 12)
        let hub = SensorHub(outbox: outbox)
        let reconciler = testReconciler()
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        let controller = try startedController(
            source: ControlDoorTests.PlanRecordingSource(),
            configuration: {
                var configuration = reconciler.effective
                configuration.streams[.events]?.enabled = eventsOn
                return configuration
            },
            hub: hub,
            logger: logger
        )
        let plane = ControlPlane(
            controller: controller,
            reconciler: reconciler,
            topics: TopicScheme(root: "motion/dev1"),
            deviceID: "dev1",
            statusDocument: { controller.status(state: .online, reason: nil, bootCount: 1) },
            logger: logger
        )
        return Fixture(plane: plane, hub: hub, outbox: outbox)
    }

    private func reply(_ plane: ControlPlane, _ text: String) throws -> ControlReply {
        try #require(
            plane.handle(
                InboundMessage(
                    topic: "motion/dev1/control",
                    payload: Array(text.utf8),
                    qos: 1,
                    retain: false,
                    responseTopic: nil,
                    correlationData: nil
                )
            )
        ).reply
    }

    /// Face up at rest, 0.3 s of free fall, a 5 g landing, then still on its side: a fall, at 100 Hz.
    static func drop() -> [IMUSample] {
        var samples: [IMUSample] = []
        var t = 0.0
        func add(_ a: Vector3, for seconds: Double) {
            let end = t + seconds
            while t < end {
                samples.append(IMUSample(timestamp: t, acceleration: a))
                t += 0.01
            }
        }
        add(Vector3(x: 0, y: 0, z: -1), for: 2)
        add(Vector3(x: 0, y: 0, z: 0), for: 0.3)
        add(Vector3(x: 1, y: 0, z: -4.9), for: 0.03)
        add(Vector3(x: 1, y: 0, z: 0), for: 5)
        return samples
    }

    @Test func aFallIsResolvedOnceThroughTheDoorAndAnsweredWithTheFollowUp() throws {
        let f = try fixture(eventsOn: true)
        let early = try reply(f.plane, #"{"id": "c0", "command": "confirm-fall"}"#)
        #expect(early.code == 409 && !early.ok && early.message.contains("no fall awaits a resolution"), "\(early)")

        for sample in Self.drop() { f.hub.ingest(sample) }
        let confirmed = try reply(f.plane, #"{"id": "c1", "command": "confirm-fall"}"#)
        #expect(confirmed.code == 200 && confirmed.ok && confirmed.id == "c1", "\(confirmed)")
        guard case .fall(let fall)? = confirmed.result else {
            Issue.record("confirm-fall answered without the fall: \(confirmed)")
            return
        }
        #expect(fall.resolution == .confirmed && fall.resolutionDate != nil && fall.peakAcceleration > 4)
        // It reads back with its shape, as `motion-agent ctl` reads it.
        #expect(try ControlReply.decode(confirmed.encoded(), shape: .fall) == confirmed)

        let again = try reply(f.plane, #"{"id": "c2", "command": "dismiss-fall"}"#)
        #expect(again.code == 409 && !again.ok && again.message.contains("already resolved"), "\(again)")
    }

    @Test func dismissingIsTheOtherResolution() throws {
        let f = try fixture(eventsOn: true)
        for sample in Self.drop() { f.hub.ingest(sample) }
        let dismissed = try reply(f.plane, #"{"id": "d1", "command": "dismiss-fall"}"#)
        guard case .fall(let fall)? = dismissed.result else {
            Issue.record("dismiss-fall answered without the fall: \(dismissed)")
            return
        }
        #expect(dismissed.code == 200 && fall.resolution == .dismissed)
    }

    @Test func withTheEventsStreamOffTheCommandIsRefusedNamingTheFix() throws {
        let f = try fixture(eventsOn: false)
        for sample in Self.drop() { f.hub.ingest(sample) }
        let refused = try reply(f.plane, #"{"id": "c1", "command": "confirm-fall"}"#)
        #expect(refused.code == 409 && refused.message.contains("start stream=events"), "\(refused)")
    }

    @Test func otherArgumentsAreRefused() throws {
        let f = try fixture(eventsOn: true)
        let refused = try reply(f.plane, #"{"id": "c1", "command": "confirm-fall", "fall": 3}"#)
        #expect(refused.code == 400 && !refused.ok, "\(refused)")
        let mistyped = try reply(f.plane, #"{"id": "c2", "command": "confirm-fall", "date": "yesterday"}"#)
        #expect(mistyped.code == 400 && !mistyped.ok, "\(mistyped)")
    }

    /// The date of the fall report the outbox holds (as a subscriber reads it).
    static func reportedDate(_ outbox: Outbox) -> Double? {
        var date: Double?
        while outbox.withOldest(
            timeout: 0,
            { m in
                for decoded in (try? PayloadDecoder.decode(Array(m.payload), kind: .events)) ?? [] {
                    if case .motionEvent(.fall(let fall)) = decoded.payload, fall.resolution == nil { date = fall.date }
                }
                return .published
            }
        ) {}
        return date
    }

    @Test func withADateOnlyThatFallIsResolved() throws {
        let f = try fixture(eventsOn: true)
        for sample in Self.drop() { f.hub.ingest(sample) }
        let date = try #require(Self.reportedDate(f.outbox))
        let wrong = try reply(f.plane, #"{"id": "c1", "command": "confirm-fall", "date": \#(date - 60)}"#)
        #expect(wrong.code == 409 && wrong.message.contains("date=" + String(format: "%.3f", date)), "\(wrong)")
        let right = try reply(f.plane, #"{"id": "c2", "command": "confirm-fall", "date": \#(date)}"#)
        guard case .fall(let fall)? = right.result else {
            Issue.record("confirm-fall with the fall's date was not applied: \(right)")
            return
        }
        #expect(right.code == 200 && fall.resolution == .confirmed && abs(fall.date - date) < 0.001)
    }
}
