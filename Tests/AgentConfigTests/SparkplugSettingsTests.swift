import Foundation
import Testing

@testable import AgentConfig

/// `sparkplug`: off by default, every key validated with the key, the value and what is allowed, and writes
/// refused while commands must be signed.
@Suite struct SparkplugSettingsTests {
    private func decode(_ yaml: String) throws -> AgentConfiguration {
        try ConfigurationLoader.decode(yaml: yaml, source: "config.yaml", environment: [:])
    }

    @Test func defaultsAreOffWithTheSlowStreamsAndDeviceMotion() {
        let settings = AgentConfiguration().sparkplug
        #expect(!settings.enabled && !settings.writes && settings.groupID == "motion" && settings.primaryHostID == nil)
        #expect(settings.streams == ["device-motion", "pedometer", "activity", "altimeter"])
    }

    @Test func aCompleteSectionDecodes() throws {
        let configuration = try decode(
            """
            device:
              id: imu-7
            sparkplug:
              group_id: Plant 1
              primary_host_id: scada
              streams: [accelerometer, device-motion]
              writes: true
            """
        )
        #expect(!configuration.sparkplug.enabled && configuration.sparkplug.writes)
        #expect(configuration.sparkplug.groupID == "Plant 1" && configuration.sparkplug.primaryHostID == "scada")
        #expect(configuration.sparkplug.streams == ["accelerometer", "device-motion"])
    }

    @Test(arguments: [
        ("sparkplug:\n  group_id: a/b\n", "sparkplug.group_id", "contains '/'"),
        ("sparkplug:\n  group_id: \"\"\n", "sparkplug.group_id", "is empty"),
        ("sparkplug:\n  primary_host_id: \"scada#1\"\n", "sparkplug.primary_host_id", "contains '#'"),
        ("sparkplug:\n  streams: [device-motion, barometer]\n", "sparkplug.streams", "is not one of the choices"),
        ("sparkplug:\n  writes: maybe\n", "sparkplug.writes", "is not true or false"),
    ])
    func badValuesNameTheKey(_ yaml: String, _ keyPath: String, _ problem: String) throws {
        let error = try #require(decodingError(yaml)?.errors.first)
        #expect(error.keyPath.hasPrefix(keyPath), "\(error)")
        #expect(error.problem.contains(problem), "\(error.problem)")
    }

    @Test func writesAreRefusedWhileCommandsMustBeSigned() throws {
        let error = try #require(
            decodingError(
                "sparkplug:\n  writes: true\ncontrol:\n  trusted_keys_file: /nonexistent/trusted.keys\n"
            )?.errors.first { $0.keyPath == "sparkplug.writes" }
        )
        #expect(error.kind == .conflict)
        #expect(error.problem.contains("cannot carry a signature"))
    }

    @Test func enablingItDecodes() throws {
        let configuration = try decode("device:\n  id: imu-7\nsparkplug:\n  enabled: true\n")
        #expect(configuration.sparkplug.enabled && configuration.sparkplug.streams.count == 4)
    }

    @Test func enablingItWithoutStreamsIsRefused() throws {
        let error = try #require(decodingError("sparkplug:\n  enabled: true\n  streams: []\n")?.errors.first)
        #expect(error.keyPath == "sparkplug.streams" && error.problem.contains("no stream"), "\(error)")
    }

    @Test func itsOwnAccountDecodesAndAnUnreadablePasswordFileIsRefused() throws {
        let directory = NSTemporaryDirectory() + "sparkplug-account-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let file = directory + "/sparkplug.password"
        try "s3cret\nignored\n".write(toFile: file, atomically: true, encoding: .utf8)
        let configuration = try decode(
            "sparkplug:\n  enabled: true\n  username: imu-7-sparkplug\n  password_file: \(file)\n"
        )
        #expect(configuration.sparkplug.username == "imu-7-sparkplug")
        #expect(try configuration.sparkplug.readPassword() == "s3cret")
        let error = try #require(
            decodingError("sparkplug:\n  password_file: \(directory)/missing\n")?.errors.first
        )
        #expect(error.keyPath == "sparkplug.password_file", "\(error)")
    }
}
