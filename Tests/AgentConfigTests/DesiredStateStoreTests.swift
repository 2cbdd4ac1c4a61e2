import Foundation
import Platform
import Testing

@testable import AgentConfig

@Suite struct DesiredStateStoreTests {
    @Test func documentsAreKeptAsReceivedAndOverridesPerKey() throws {
        let directory = try TemporaryDirectory()
        let store = DesiredStateStore(state: StateFiles(path: directory.path))
        let payload = Array(#"{"version": 7, "streams": {"gyroscope": {"rate_hz": 25}}}"#.utf8)
        try store.save(payload, for: .group("lab/2 ü"))
        try store.save(Array(#"{"version": 3}"#.utf8), for: .fleet)
        let override = RuntimeOverride(
            value: "100",
            commandID: "7f1c2a",
            time: 1_795_000_000,
            beneath: ["config.yaml": "50"]
        )
        try store.save(overrides: ["streams.accelerometer.rate_hz": override])

        // The bytes as received, in one file per layer with a safe name.
        let files = try FileManager.default.contentsOfDirectory(atPath: store.directory).sorted()
        #expect(files == ["fleet.json", "group-lab%2F2%20%C3%BC.json", "overrides.json"])
        #expect(FileManager.default.contents(atPath: store.path(of: .group("lab/2 ü"))) == Data(payload))

        let loaded = store.load(layers: [.fleet, .group("lab/2 ü"), .device])
        #expect(loaded.problems == [])
        #expect(loaded.documents[.fleet]?.version == 3)
        #expect(loaded.documents[.group("lab/2 ü")]?.settings["streams.gyroscope.rate_hz"] == "25")
        #expect(loaded.documents[.device] == nil)
        #expect(loaded.overrides == ["streams.accelerometer.rate_hz": override])

        // A cleared layer and no overrides leave no files behind.
        try store.save(nil, for: .fleet)
        try store.save(overrides: [:])
        #expect(try FileManager.default.contentsOfDirectory(atPath: store.directory) == ["group-lab%2F2%20%C3%BC.json"])
    }

    @Test func aKeptDocumentTodaysSchemaRefusesIsLeftOutAndSaysWhy() throws {
        let directory = try TemporaryDirectory()
        let store = DesiredStateStore(state: StateFiles(path: directory.path))
        try store.save(Array(#"{"version": 2, "streams": {"gyroscope": {"rate_hz": 9000}}}"#.utf8), for: .device)
        try directory.write("desired/overrides.json", "not json")
        let loaded = store.load(layers: [.device])
        #expect(loaded.documents.isEmpty)
        #expect(loaded.overrides.isEmpty)
        #expect(loaded.problems.count == 2)
        #expect(loaded.problems[0].contains("streams.gyroscope.rate_hz"))
        #expect(loaded.problems[0].contains("device layer is left out"))
        #expect(loaded.problems[1].contains("overrides.json"))
    }

    /// Round one's trap: one set-rate wrote all eight streams. Only what differs from config.yaml survives,
    /// as per-key overrides, and the file is migrated once.
    @Test func roundOneStreamsFileBecomesOverridesOfTheDifferingKeysOnly() throws {
        let directory = try TemporaryDirectory()
        let base = try ConfigurationLoader.decode(yaml: "streams:\n  accelerometer: {enabled: true, rate_hz: 50}\n")
        let legacy = """
            {
              "accelerometer": {"enabled": true, "rateHz": 200, "qos": 0, "retain": false, "batch": 1, "encoding": "json"},
              "gyroscope": {"enabled": \(base[stream: .gyroscope].enabled), "rateHz": \(base[stream: .gyroscope].rateHz),
                            "qos": \(base[stream: .gyroscope].qos), "retain": false},
              "device-motion": {"enabled": \(base[stream: .deviceMotion].enabled),
                                "rateHz": \(base[stream: .deviceMotion].rateHz), "qos": \(base[stream: .deviceMotion].qos),
                                "retain": false, "referenceFrame": "xMagneticNorthZVertical"}
            }
            """
        try directory.write("streams.json", legacy)
        let store = DesiredStateStore(state: StateFiles(path: directory.path))
        let migrated = try #require(store.migrateLegacyStreams(base: base))
        #expect(migrated.problems == [])
        #expect(
            migrated.0.values == [
                "streams.accelerometer.rate_hz": "200",
                "streams.device-motion.reference_frame": "xMagneticNorthZVertical",
            ]
        )
        #expect(FileManager.default.fileExists(atPath: directory.path + "/streams.json.migrated"))
        #expect(store.migrateLegacyStreams(base: base) == nil)
    }
}
