import Foundation
import Testing

@testable import AgentConfig

@Suite struct ResolutionTests {
    @Test func templatesUseTheDeviceID() {
        var configuration = AgentConfiguration()
        configuration.device.id = "imu-3"
        #expect(configuration.resolvedClientID == "motion-agent-imu-3")
        #expect(configuration.resolvedTopicRoot == "motion/imu-3")
        configuration.topics.root = "site/{device}/{device}"
        #expect(configuration.resolvedTopicRoot == "site/imu-3/imu-3")
    }

    @Test func theDefaultDeviceIDIsTheHostName() {
        let id = AgentConfiguration().device.id
        #expect(!id.isEmpty)
        #expect(TopicTemplate.checkDeviceID(id) == nil)
    }

    @Test func anExplicitStateDirectoryIsCreated() throws {
        let directory = try TemporaryDirectory()
        var settings = AgentSettings()
        settings.stateDir = directory.path + "/a/b"
        #expect(try settings.resolvedStateDirectory() == directory.path + "/a/b")
        var isDirectory: ObjCBool = false
        #expect(FileManager.default.fileExists(atPath: directory.path + "/a/b", isDirectory: &isDirectory))
        #expect(isDirectory.boolValue)
    }

    @Test func anUnusableExplicitStateDirectoryIsAnError() throws {
        let directory = try TemporaryDirectory()
        let file = try directory.write("file", "x")
        var settings = AgentSettings()
        settings.stateDir = file + "/state"
        #expect {
            try settings.resolvedStateDirectory()
        } throws: { error in
            let error = error as? ConfigurationError
            return error?.keyPath == "agent.state_dir" && error?.value == file + "/state"
                && error?.kind == .fileUnavailable
        }
    }

    @Test func theSystemDirectoryComesFirstThenTheFallback() throws {
        let directory = try TemporaryDirectory()
        let file = try directory.write("file", "x")
        let settings = AgentSettings()
        #expect(
            try settings.resolvedStateDirectory(
                systemDirectory: directory.path + "/system",
                fallbackDirectory: directory.path + "/fallback"
            )
                == directory.path + "/system"
        )
        // A system directory that cannot be created (its parent is a file) falls back.
        #expect(
            try settings.resolvedStateDirectory(
                systemDirectory: file + "/system",
                fallbackDirectory: directory.path + "/fallback"
            )
                == directory.path + "/fallback"
        )
        #expect(FileManager.default.fileExists(atPath: directory.path + "/fallback"))
        #expect(throws: ConfigurationError.self) {
            try settings.resolvedStateDirectory(
                systemDirectory: file + "/system",
                fallbackDirectory: file + "/fallback"
            )
        }
    }

    @Test func theFallbackIsAbsolute() throws {
        let directory = try TemporaryDirectory()
        let file = try directory.write("file", "x")
        let resolved = try AgentSettings().resolvedStateDirectory(
            systemDirectory: file + "/system",
            fallbackDirectory: directory.path + "/./x/../fb"
        )
        #expect(resolved == directory.path + "/fb")
    }

    @Test(arguments: [
        ("pw\n", "pw"), ("pw\r\nsecond\n", "pw"), ("no newline", "no newline"), ("  spaced  \n", "  spaced  "),
    ])
    func thePasswordIsTheFirstLine(_ contents: String, _ password: String) throws {
        let directory = try TemporaryDirectory()
        var mqtt = MQTTSettings()
        mqtt.passwordFile = try directory.write("password", contents)
        #expect(try mqtt.readPassword() == password)
    }

    @Test func noPasswordFileMeansNoPassword() throws {
        #expect(try MQTTSettings().readPassword() == nil)
    }

    @Test func aVanishedPasswordFileNamesTheKeyAndTheFile() throws {
        var mqtt = MQTTSettings()
        mqtt.passwordFile = "/nonexistent/motion-agent/password"
        #expect {
            try mqtt.readPassword()
        } throws: { error in
            let error = error as? ConfigurationError
            return error?.keyPath == "mqtt.password_file" && error?.value == "/nonexistent/motion-agent/password"
                && error?.description.contains("No such file or directory") == true
        }
    }
}
