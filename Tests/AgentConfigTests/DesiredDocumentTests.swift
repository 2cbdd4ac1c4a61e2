import Testing

@testable import AgentConfig

@Suite struct DesiredDocumentTests {
    private func decode(_ json: String) throws(ConfigurationError) -> DesiredDocument {
        try DesiredDocument.decode(Array(json.utf8), source: "motion/fleet/desired")
    }

    private func problems(_ json: String) -> [ConfigurationError] {
        do {
            _ = try decode(json)
            return []
        } catch {
            return error.errors
        }
    }

    @Test func readsVersionAndRuntimeKeysInCanonicalForm() throws {
        let document = try decode(
            #"{"version": 13, "streams": {"accelerometer": {"rate_hz": 100.0, "enabled": true}, "#
                + #""device-motion": {"reference_frame": "xMagneticNorthZVertical"}}, "metrics": {"interval_s": 30}}"#
        )
        #expect(document.version == 13)
        #expect(
            document.settings.values == [
                "streams.accelerometer.rate_hz": "100",
                "streams.accelerometer.enabled": "true",
                "streams.device-motion.reference_frame": "xMagneticNorthZVertical",
                "metrics.interval_s": "30",
            ]
        )
    }

    @Test func anOnlyVersionDocumentSetsNothing() throws {
        #expect(try decode(#"{"version": 1}"#).settings.isEmpty)
    }

    @Test func valuesAreCheckedByTheConfigSchemaWithItsErrors() {
        let found = problems(#"{"version": 2, "streams": {"accelerometer": {"rate_hz": 5000, "qos": 3}}}"#)
        // In the document's order, as config.yaml's problems are in the file's.
        #expect(found.map(\.keyPath) == ["streams.accelerometer.rate_hz", "streams.accelerometer.qos"])
        #expect(found.allSatisfy { $0.kind == .outOfRange && $0.file == "motion/fleet/desired" })
        #expect(found.first?.allowed == "a number > 0 and ≤ 1000 (Hz)")
        #expect(found.first?.value == "5000")
    }

    /// The events detector's own keys (issue 44): each kind on or off, the thresholds in their ranges.
    @Test func theEventsDetectorsKeysAreRuntimeKeysCheckedByTheSchema() throws {
        let document = try decode(
            #"{"version": 3, "streams": {"events": {"impacts": false, "tilt": true, "impact_threshold_g": 4.5, "#
                + #""fall_response_s": 30, "tilt_cone_degrees": 20}}}"#
        )
        var configuration = AgentConfiguration()
        document.settings.apply(to: &configuration)
        for keyPath in document.settings.values.keys {
            #expect(SettingEffect.of(keyPath: keyPath) == .immediate, "\(keyPath)")
        }
        var expected = MotionEventsSettings()
        expected.impacts = false
        expected.tilt = true
        expected.impactThresholdG = 4.5
        expected.fallResponseSeconds = 30
        expected.tiltConeDegrees = 20
        #expect(configuration.events == expected)

        let found = problems(
            #"{"version": 4, "streams": {"events": {"impact_threshold_g": 40, "fall_response_s": 1, "#
                + #""tilt_cone_degrees": 90, "falls": "maybe"}}}"#
        )
        #expect(
            found.map(\.keyPath) == [
                "streams.events.impact_threshold_g", "streams.events.fall_response_s",
                "streams.events.tilt_cone_degrees", "streams.events.falls",
            ]
        )
        #expect(found.first?.allowed == "a number from 1.5 to 16 (g)")
    }

    @Test func aTypoGetsTheSameSuggestionAsInConfigYAML() {
        let found = problems(#"{"version": 2, "streams": {"acelerometer": {"rate_hz": 50}}}"#)
        #expect(found.count == 1)
        #expect(found.first?.kind == .unknownKey)
        #expect(found.first?.suggestion == "accelerometer")
    }

    @Test func keysThatNeedARestartAreRefusedWithTheReason() {
        let found = problems(#"{"version": 2, "mqtt": {"port": 1884}, "metrics": {"prometheus_file": "/tmp/x"}}"#)
        #expect(found.map(\.keyPath).sorted() == ["metrics.prometheus_file", "mqtt"])
        #expect(found.allSatisfy { $0.problem.contains("restart") })
    }

    @Test func versionMustBeAPositiveWholeNumber() {
        #expect(problems(#"{"streams": {}}"#).map(\.kind) == [.missingValue])
        #expect(problems(#"{"version": 0}"#).map(\.keyPath) == ["version"])
        #expect(problems(#"{"version": "x"}"#).map(\.keyPath) == ["version"])
        #expect(problems(#"{"version": 1.5}"#).map(\.keyPath) == ["version"])
    }

    @Test func notJSONNotAnObjectNotUTF8() {
        #expect(problems(#"{"version": "#).first?.kind == .syntax)
        #expect(problems("[1, 2]").first?.kind == .wrongType)
        do {
            _ = try DesiredDocument.decode([0xFF, 0xFE], source: "t")
            Issue.record("invalid UTF-8 was accepted")
        } catch {
            #expect(error.kind == .syntax)
        }
    }

    @Test func commandValuesGoThroughTheSameValidator() {
        #expect(throws: ConfigurationError.self) {
            try ConfigurationOverlay(validating: ["streams.gyroscope.rate_hz": "10000"], source: "command 1")
        }
        #expect(throws: ConfigurationError.self) {
            try ConfigurationOverlay(validating: ["mqtt.port": "1884"], source: "command 1")
        }
    }
}

@Suite struct DesiredDocumentEditingTests {
    @Test func encodedReadsBackAsTheSameDocument() throws {
        let document = try DesiredDocument(
            version: 4,
            settings: ConfigurationOverlay(
                validating: [
                    "streams.accelerometer.rate_hz": "100.0", "streams.accelerometer.encoding": "binary",
                    "streams.device-motion.reference_frame": "xTrueNorthZVertical", "metrics.interval_s": "30",
                ],
                source: "test"
            )
        )
        let text = String(decoding: document.encoded(), as: UTF8.self)
        #expect(
            text == #"{"metrics":{"interval_s":30},"streams":{"accelerometer":{"encoding":"binary","rate_hz":100},"#
                + #""device-motion":{"reference_frame":"xTrueNorthZVertical"}},"version":4}"#
        )
        #expect(try DesiredDocument.decode(document.encoded(), source: "t") == document)
    }

    @Test func updatingRaisesTheVersionSetsAndUnsets() throws {
        let current = try DesiredDocument.decode(
            Array(
                #"{"version": 12, "streams": {"gyroscope": {"rate_hz": 25, "qos": 1}, "accelerometer": {"qos": 1}}}"#
                    .utf8
            ),
            source: "t"
        )
        let next = try current.updating(
            setting: ["streams.magnetometer.enabled": "false"],
            unsetting: ["streams.gyroscope"],
            source: "fleet set"
        )
        #expect(next.version == 13)
        #expect(next.settings.values == ["streams.accelerometer.qos": "1", "streams.magnetometer.enabled": "false"])
        #expect(throws: ConfigurationError.self) {
            try current.updating(setting: ["streams.gyroscope.rate_hz": "0"], source: "fleet set")
        }
        #expect(throws: ConfigurationError.self) {
            try current.updating(setting: [:], unsetting: ["streams.gyro"], source: "fleet unset")
        }
    }
}
