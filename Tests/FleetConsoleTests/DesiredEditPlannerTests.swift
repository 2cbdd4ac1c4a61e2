import AgentConfig
import AgentControl
import FleetOperations
import Testing

/// The next version of a layer's document, as `fleet set` and the console build it.
struct DesiredEditPlannerTests {
    static let planner = DesiredEditPlanner(layer: .fleet, topic: "motion/fleet/desired")

    @Test func buildsOneVersionAboveTheRetainedDocument() throws {
        let retained = try DesiredDocument.decode(
            Array(#"{"version": 4, "metrics": {"interval_s": 30}}"#.utf8),
            source: "t"
        )
        let edit = try Self.planner.plan(
            .set(["streams.accelerometer.rate_hz": "100"], unset: []),
            retained: retained,
            unreadable: [:],
            reported: ["a": 4]
        )
        #expect(edit.document.version == 5)
        #expect(edit.document.settings.values["metrics.interval_s"] == "30")
        #expect(edit.document.settings.values["streams.accelerometer.rate_hz"] == "100")
        #expect(edit.payload == edit.document.encoded())
    }

    @Test func refusesAnInvalidValueWithTheSchemasMessage() {
        #expect(throws: DesiredEditError.self) {
            try Self.planner.plan(
                .set(["streams.accelerometer.rate_hz": "5000"], unset: []),
                retained: nil,
                unreadable: [:],
                reported: [:]
            )
        }
    }

    @Test func neverBuildsOnADocumentThatDoesNotVerify() {
        do {
            _ = try Self.planner.plan(
                .set(["metrics.interval_s": "10"], unset: []),
                retained: nil,
                unreadable: ["127.0.0.1:1883": "not signed"],
                reported: [:]
            )
            Issue.record("built on a planted document")
        } catch {
            #expect(error.description.contains("--replace"))
        }
    }

    @Test func aDeviceAheadOfTheNextVersionIsNamed() {
        do {
            _ = try Self.planner.plan(.clear, retained: nil, unreadable: [:], reported: ["a": 1, "far<ahead>": 9])
            Issue.record("published below a device's version")
        } catch {
            #expect(error.description.contains("far<ahead> runs fleet v9"))
        }
    }

    @Test func replaceStartsAboveWhatTheDevicesReport() throws {
        var planner = Self.planner
        planner.replace = true
        let edit = try planner.plan(.clear, retained: nil, unreadable: ["n": "planted"], reported: ["a": 7, "b": 3])
        #expect(edit.document.version == 8)
        #expect(edit.document.clear)
    }

    @Test func signsForTheTopicAndLayerWithTheKey() throws {
        let key = try OperatorSigningKey.generate(id: "op-1")
        let planner = DesiredEditPlanner(layer: .group("lab"), topic: "motion/group/lab/desired", signingKey: key)
        let edit = try planner.plan(
            .set(["metrics.interval_s": "10"], unset: []),
            retained: nil,
            unreadable: [:],
            reported: [:]
        )
        let keys = try #require(try DesiredEditPlanner.verificationKeys(signing: key, trusted: nil))
        let opener = DesiredDocumentOpener(keys: keys)
        let opened = try opener.open(edit.payload, layer: .group("lab"), topic: "motion/group/lab/desired").get()
        #expect(opened.version == 1)
        // Moved to another group's topic, the same bytes are refused.
        #expect((try? opener.open(edit.payload, layer: .group("x"), topic: "motion/group/x/desired").get()) == nil)
    }
}
