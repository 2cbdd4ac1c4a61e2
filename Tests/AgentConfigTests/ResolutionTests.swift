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

    @Test(arguments: [
        ("0123456789abcdef\n", "0123456789abcdef"),
        ("0123456789abcdef\r\n", "0123456789abcdef"),
        ("0123456789abcdef", "0123456789abcdef"),
        // Only one line break is the file's ending; what is before it is key.
        ("0123456789abcdef\n\n", "0123456789abcdef\n"),
        (" 0123456789abcdef \n", " 0123456789abcdef "),
        ("line one........\nline two\n", "line one........\nline two"),
    ])
    func theHMACKeyIsTheFileWithoutItsTrailingLineBreak(_ contents: String, _ key: String) throws {
        let directory = try TemporaryDirectory()
        var control = ControlSettings()
        control.hmacKeyFile = try directory.write("control.key", contents)
        #expect(try control.readHMACKey() == Array(key.utf8))
    }

    @Test func theHMACKeyMayBeBinary() throws {
        let directory = try TemporaryDirectory()
        let bytes = (0...255).map(UInt8.init) + [0x0A]
        let path = directory.path + "/control.key"
        #expect(FileManager.default.createFile(atPath: path, contents: Data(bytes)))
        var control = ControlSettings()
        control.hmacKeyFile = path
        #expect(try control.readHMACKey() == Array(bytes.dropLast()))
    }

    @Test func noHMACKeyFileMeansUnsignedCommands() throws {
        #expect(try ControlSettings().readHMACKey() == nil)
    }

    @Test func aVanishedOrShortenedHMACKeyFileNamesTheKeyAndTheFile() throws {
        let directory = try TemporaryDirectory()
        var control = ControlSettings()
        control.hmacKeyFile = directory.path + "/missing.key"
        #expect {
            try control.readHMACKey()
        } throws: { error in
            let error = error as? ConfigurationError
            return error?.keyPath == "control.hmac_key_file" && error?.value == directory.path + "/missing.key"
                && error?.kind == .fileUnavailable && error?.description.contains("No such file or directory") == true
        }
        control.hmacKeyFile = try directory.write("short.key", "0123456789abcde\n")
        #expect {
            try control.readHMACKey()
        } throws: { error in
            let error = error as? ConfigurationError
            return error?.keyPath == "control.hmac_key_file" && error?.kind == .invalidValue
                && error?.problem.contains("at least 16 bytes") == true
        }
    }

    @Test func aLocationIsConfiguredOnlyWithLatitudeAndLongitude() {
        var location = LocationSettings()
        #expect(!location.isConfigured)
        location.latitude = 48.2
        #expect(!location.isConfigured)
        location.longitude = 16.37
        #expect(location.isConfigured)
        location.latitude = nil
        #expect(!location.isConfigured)
    }

    @Test func durationsFollowTheSeconds() {
        var control = ControlSettings()
        #expect(control.maxAge == .seconds(300))
        control.maxAgeSeconds = 0
        #expect(control.maxAge == nil)
        #expect(OutboxSettings().maxAge == .seconds(3600))
    }

    @Test func waterDensities() {
        #expect(WaterKind.fresh.densityKgPerM3 == 997)
        #expect(WaterKind.salt.densityKgPerM3 == 1025)
        #expect(SubmersionSettings().water == .fresh)
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
