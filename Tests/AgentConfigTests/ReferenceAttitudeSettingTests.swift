import MotionModel
import Testing

@testable import AgentConfig

/// `streams.device-motion.reference_attitude`: the same check whichever door the value comes through.
@Suite struct ReferenceAttitudeSettingTests {
    private let key = "streams.device-motion.reference_attitude"

    private func problem(_ text: String) -> ConfigurationError? {
        do {
            _ = try ConfigurationOverlay(validating: [key: text], source: "command")
            return nil
        } catch {
            return error.errors.first
        }
    }

    @Test func noneIsTheDefaultAndMeansNoReference() throws {
        #expect(AgentConfiguration().deviceMotion.referenceAttitude == nil)
        let overlay = try ConfigurationOverlay(validating: [key: "none"], source: "command")
        #expect(overlay[key] == "none", "kept as a value, so a command can clear what a desired document set")
        let yaml = try ConfigurationLoader.decode(yaml: "streams:\n  device-motion:\n    reference_attitude: none\n")
        #expect(yaml.deviceMotion.referenceAttitude == nil)
    }

    @Test func aLabelledQuaternionInAnyOrderIsNormalised() throws {
        let configuration = try ConfigurationLoader.decode(
            yaml: "streams:\n  device-motion:\n    reference_attitude: \"z=2, w=2, x=0 y=0\"\n"
        )
        let q = try #require(configuration.deviceMotion.referenceAttitude)
        let h = 0.5.squareRoot()
        #expect(abs(q.w - h) < 1e-15 && q.x == 0 && q.y == 0 && abs(q.z - h) < 1e-15)
        #expect(abs(q.norm - 1) < 1e-15)
    }

    @Test func theCanonicalTextReadsBackBitForBit() throws {
        let q = Quaternion(roll: 0.31, pitch: -1.2, yaw: 2.7)
        let text = DeviceMotionSettings.referenceAttitudeText(q)
        let overlay = try ConfigurationOverlay(validating: [key: text], source: "command")
        var configuration = AgentConfiguration()
        overlay.apply(to: &configuration)
        let back = try #require(configuration.deviceMotion.referenceAttitude)
        #expect(back.angle(to: q) < 1e-15)
        // Canonical: normalising again and writing again changes nothing, so layers compare it as text.
        #expect(overlay[key] == DeviceMotionSettings.referenceAttitudeText(back))
    }

    @Test func aDesiredDocumentCanSetIt() throws {
        let document = try DesiredDocument.decode(
            Array(#"{"version": 3, "streams": {"device-motion": {"reference_attitude": "w=1 x=0 y=0 z=1"}}}"#.utf8),
            source: "motion/fleet/desired"
        )
        var configuration = AgentConfiguration()
        document.settings.apply(to: &configuration)
        let q = try #require(configuration.deviceMotion.referenceAttitude)
        let h = 0.5.squareRoot()
        #expect(abs(q.w - h) < 1e-15 && q.x == 0 && q.y == 0 && abs(q.z - h) < 1e-15)
        #expect(document.settings[key] == DeviceMotionSettings.referenceAttitudeText(q))
    }

    @Test(arguments: [
        ("w=0 x=0 y=0 z=0", "too close to 0", ConfigurationError.Kind.outOfRange),
        ("w=1e-9 x=0 y=0 z=0", "too close to 0", .outOfRange),
        ("w=.nan x=0 y=0 z=0", "not finite", .outOfRange),
        ("w=1 x=.inf y=0 z=0", "not finite", .outOfRange),
        ("w=1 x=0 y=0", "lacks z", .missingValue),
        ("w=1 x=0 w=1 y=0 z=0", "gives w twice", .invalidValue),
        ("w=1 x=zero y=0 z=0", "x=zero, which is not a number", .wrongType),
        ("1 0 0 0", "is not one of w=…, x=…, y=…, z=…", .wrongType),
        ("w=1 x=0 y=0 z=0 t=3", "\"t=3\" is not one of", .wrongType),
    ])
    func badValuesAreRefusedNamingTheFix(text: String, fragment: String, kind: ConfigurationError.Kind) throws {
        let error = try #require(problem(text), "\(text) was accepted")
        #expect(error.kind == kind, "\(text): \(error)")
        #expect(error.description.contains(fragment), "\(text): \(error)")
        #expect(error.keyPath == key)
        #expect(error.allowed.contains("w=… x=… y=… z=…"))
    }

    @Test func smallAndHugeComponentsAreNormalisedWithoutOverflow() throws {
        for scale in [1e-5, 1, 1e200] {
            let text = "w=\(scale) x=\(scale) y=0 z=0"
            let overlay = try ConfigurationOverlay(validating: [key: text], source: "command")
            var configuration = AgentConfiguration()
            overlay.apply(to: &configuration)
            let q = try #require(configuration.deviceMotion.referenceAttitude)
            #expect(abs(q.w - 0.5.squareRoot()) < 1e-15 && abs(q.x - 0.5.squareRoot()) < 1e-15, "\(scale)")
        }
    }

    @Test func theEffectiveConfigurationWritesItBack() throws {
        var configuration = AgentConfiguration()
        configuration.deviceMotion.referenceAttitude = Quaternion(w: 1, x: 0, y: 0, z: 0)
        let yaml = configuration.effectiveYAML()
        #expect(yaml.contains("reference_attitude: \"w=1 x=0 y=0 z=0\""))
        let back = try ConfigurationLoader.decode(yaml: yaml)
        #expect(back.deviceMotion.referenceAttitude == Quaternion(w: 1, x: 0, y: 0, z: 0))
        #expect(AgentConfiguration().effectiveYAML().contains("reference_attitude: none"))
    }
}
