import AgentPorts
import Testing

@testable import AgentConfig

@Suite struct ConfigurationLayersTests {
    private func base(rate: Int = 50, groups: [String] = ["lab", "floor-2"]) throws -> AgentConfiguration {
        try ConfigurationLoader.decode(
            yaml: """
                control:
                  groups: [\(groups.joined(separator: ", "))]
                streams:
                  accelerometer: {enabled: true, rate_hz: \(rate)}
                  gyroscope: {enabled: true, rate_hz: 50}
                """
        )
    }

    private func document(_ version: Int, _ streams: String) throws -> DesiredDocument {
        try DesiredDocument.decode(Array(#"{"version": \#(version), "streams": \#(streams)}"#.utf8), source: "test")
    }

    private func overlay(_ values: [String: String]) throws -> ConfigurationOverlay {
        try ConfigurationOverlay(validating: values, source: "command")
    }

    private let accelerometerRate = "streams.accelerometer.rate_hz"

    @Test func precedenceAcrossAllFiveLayers() throws {
        var layers = ConfigurationLayers(base: try base())
        #expect(layers.resolve().sources[accelerometerRate] == .configFile)
        _ = layers.receive(try document(3, #"{"accelerometer": {"rate_hz": 10}}"#), for: .fleet, source: "f")
        #expect(layers.resolve().configuration[stream: .accelerometer].rateHz == 10)
        _ = layers.receive(try document(4, #"{"accelerometer": {"rate_hz": 20}}"#), for: .group("lab"), source: "g")
        _ = layers.receive(
            try document(5, #"{"accelerometer": {"rate_hz": 30}}"#),
            for: .group("floor-2"),
            source: "g2"
        )
        // Later groups in control.groups win.
        #expect(layers.resolve().configuration[stream: .accelerometer].rateHz == 30)
        #expect(layers.resolve().sources[accelerometerRate] == .desired(.group("floor-2"), version: 5))
        _ = layers.receive(try document(1, #"{"accelerometer": {"rate_hz": 40}}"#), for: .device, source: "d")
        #expect(layers.resolve().configuration[stream: .accelerometer].rateHz == 40)
        try layers.command(try overlay([accelerometerRate: "25"]), id: "c1", time: 1000, source: "command c1")
        let resolved = layers.resolve()
        #expect(resolved.configuration[stream: .accelerometer].rateHz == 25)
        #expect(resolved.sources[accelerometerRate] == .command(id: "c1", time: 1000))
        // Keys nobody above config.yaml set keep config.yaml's value and say so.
        #expect(resolved.configuration[stream: .gyroscope].rateHz == 50)
        #expect(resolved.sources["streams.gyroscope.rate_hz"] == .configFile)
    }

    @Test func aGroupTheDeviceIsNotInDoesNotCount() throws {
        var layers = ConfigurationLayers(base: try base(groups: ["lab"]))
        _ = layers.receive(try document(1, #"{"accelerometer": {"rate_hz": 10}}"#), for: .group("other"), source: "g")
        #expect(layers.resolve().configuration[stream: .accelerometer].rateHz == 50)
    }

    @Test func aCommandChangesOnlyTheKeysItNames() throws {
        var layers = ConfigurationLayers(base: try base())
        try layers.command(try overlay([accelerometerRate: "100"]), id: "c1", time: 1, source: "command c1")
        #expect(Array(layers.overrides.keys) == [accelerometerRate])
        // The trap of round one: an edit of another key in config.yaml applies on reload (and at restart,
        // which builds the layers from the persisted overrides the same way).
        var edited = try base()
        edited[stream: .gyroscope].rateHz = 25
        #expect(try layers.replaceBase(edited, source: "config.yaml") == [])
        #expect(layers.resolve().configuration[stream: .gyroscope].rateHz == 25)
        #expect(layers.resolve().configuration[stream: .accelerometer].rateHz == 100)
        let restarted = ConfigurationLayers(base: edited, overrides: layers.overrides)
        #expect(restarted.resolve().configuration[stream: .gyroscope].rateHz == 25)
        #expect(restarted.resolve().configuration[stream: .accelerometer].rateHz == 100)
    }

    @Test func aNewerDesiredDocumentThatChangesTheKeySupersedesTheCommand() throws {
        var layers = ConfigurationLayers(base: try base())
        _ = layers.receive(try document(1, #"{"accelerometer": {"rate_hz": 10}}"#), for: .fleet, source: "f")
        try layers.command(try overlay([accelerometerRate: "100"]), id: "c1", time: 1, source: "command c1")
        // A newer document that leaves the key's value as it was does not rewrite it.
        let same = layers.receive(
            try document(2, #"{"accelerometer": {"rate_hz": 10, "qos": 1}}"#),
            for: .fleet,
            source: "f"
        )
        #expect(same == .applied(supersededCommands: []))
        #expect(layers.resolve().configuration[stream: .accelerometer].rateHz == 100)
        let changed = layers.receive(try document(3, #"{"accelerometer": {"rate_hz": 20}}"#), for: .fleet, source: "f")
        #expect(changed == .applied(supersededCommands: [accelerometerRate]))
        #expect(layers.resolve().configuration[stream: .accelerometer].rateHz == 20)
        #expect(layers.resolve().sources[accelerometerRate] == .desired(.fleet, version: 3))
        // And the reverse: a command after the document wins.
        try layers.command(try overlay([accelerometerRate: "200"]), id: "c2", time: 2, source: "command c2")
        #expect(layers.resolve().configuration[stream: .accelerometer].rateHz == 200)
    }

    @Test func aConfigEditOfTheSameKeySupersedesTheCommand() throws {
        var layers = ConfigurationLayers(base: try base())
        try layers.command(try overlay([accelerometerRate: "100"]), id: "c1", time: 1, source: "command c1")
        #expect(try layers.replaceBase(try base(rate: 50), source: "config.yaml") == [])
        #expect(try layers.replaceBase(try base(rate: 60), source: "config.yaml") == [accelerometerRate])
        #expect(layers.resolve().configuration[stream: .accelerometer].rateHz == 60)
        // At start the same: persisted overrides whose key config.yaml changed while the agent was down go.
        var offline = ConfigurationLayers(base: try base(rate: 50))
        try offline.command(try overlay([accelerometerRate: "100"]), id: "c1", time: 1, source: "command c1")
        #expect(ConfigurationLayers(base: try base(rate: 70), overrides: offline.overrides).overrides.isEmpty)
    }

    @Test func olderOrConflictingVersionsAreNotApplied() throws {
        var layers = ConfigurationLayers(base: try base())
        let v5 = try document(5, #"{"accelerometer": {"rate_hz": 10}}"#)
        #expect(layers.receive(v5, for: .fleet, source: "f") == .applied(supersededCommands: []))
        #expect(layers.receive(v5, for: .fleet, source: "f") == .unchanged)
        #expect(
            layers.receive(try document(4, #"{"accelerometer": {"rate_hz": 99}}"#), for: .fleet, source: "f")
                == .stale(inForce: 5)
        )
        guard
            case .refused(let error) = layers.receive(
                try document(5, #"{"accelerometer": {"rate_hz": 99}}"#),
                for: .fleet,
                source: "f"
            )
        else {
            Issue.record("a second, different version 5 was not refused")
            return
        }
        #expect(error.kind == .conflict)
        #expect(layers.resolve().configuration[stream: .accelerometer].rateHz == 10)
    }

    @Test func aDocumentThatBreaksTheWholeIsRefusedAndThePreviousStays() throws {
        var layers = ConfigurationLayers(base: try base())
        _ = layers.receive(
            try document(1, #"{"accelerometer": {"qos": 1, "durable": true}}"#),
            for: .fleet,
            source: "f"
        )
        let outcome = layers.receive(try document(1, #"{"accelerometer": {"qos": 0}}"#), for: .device, source: "d")
        guard case .refused(let error) = outcome else {
            Issue.record("durable with QoS 0 was accepted: \(outcome)")
            return
        }
        #expect(error.keyPath == "streams.accelerometer.durable")
        #expect(layers.documents[.device] == nil)
        #expect(layers.resolve().configuration[stream: .accelerometer].qos == 1)
    }

    @Test func aClearDocumentRemovesTheLayersSettingsAndKeepsItsVersion() throws {
        var layers = ConfigurationLayers(base: try base())
        _ = layers.receive(try document(1, #"{"accelerometer": {"rate_hz": 10}}"#), for: .device, source: "d")
        #expect(layers.receive(.clearing(version: 2), for: .device, source: "d") == .applied(supersededCommands: []))
        #expect(layers.resolve().configuration[stream: .accelerometer].rateHz == 50)
        #expect(layers.receive(.clearing(version: 2), for: .device, source: "d") == .unchanged)
        #expect(
            layers.receive(try document(1, #"{"accelerometer": {"rate_hz": 10}}"#), for: .device, source: "d")
                == .stale(inForce: 2)
        )
    }
}
