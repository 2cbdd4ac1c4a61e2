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

    static let keyLine = "ops-1 ed25519 AQIDBAUGBwgJCgsMDQ4PEBESExQVFhcYGRobHB0eHyA="

    @Test func theTrustedKeysAreReadWithTheirIDs() throws {
        let directory = try TemporaryDirectory()
        var control = ControlSettings()
        control.trustedKeysFile = try directory.write(
            "trusted",
            "# operators\n\(Self.keyLine)  alice's laptop\n\nops-2 ed25519 \(Base64.encode(Array(repeating: 7, count: 32)))\n"
        )
        let keys = try #require(try control.readTrustedKeys())
        #expect(keys.keys.map(\.id) == ["ops-1", "ops-2"])
        #expect(keys.keys[0].publicKey == Array(1...32))
    }

    @Test func noTrustedKeysFileMeansUnsignedCommands() throws {
        #expect(try ControlSettings().readTrustedKeys() == nil)
    }

    @Test(arguments: [
        ("", "holds no key"),
        ("ops-1 rsa AAAA\n", "line 1 is not"),
        ("ops-1 ed25519 AAAA\n", "line 1: the public key is not the base64 of 32 bytes"),
        ("bad/id ed25519 AQIDBAUGBwgJCgsMDQ4PEBESExQVFhcYGRobHB0eHyA=\n", "line 1: the key id may hold only"),
        (
            "ops-1 ed25519 AQIDBAUGBwgJCgsMDQ4PEBESExQVFhcYGRobHB0eHyA=\nops-1 ed25519 AQIDBAUGBwgJCgsMDQ4PEBESExQVFhcYGRobHB0eHyA=\n",
            "line 2 repeats the key id ops-1"
        ),
    ])
    func aMalformedTrustedKeysFileNamesTheLineAndTheProblem(_ contents: String, _ problem: String) throws {
        let directory = try TemporaryDirectory()
        var control = ControlSettings()
        control.trustedKeysFile = try directory.write("trusted", contents)
        #expect {
            try control.readTrustedKeys()
        } throws: { error in
            let error = error as? ConfigurationError
            return error?.keyPath == "control.trusted_keys_file" && error?.problem.contains(problem) == true
        }
    }

    @Test func aTrustedKeysFileOthersMayWriteIsRefused() throws {
        let directory = try TemporaryDirectory()
        var control = ControlSettings()
        let path = try directory.write("trusted", Self.keyLine + "\n")
        control.trustedKeysFile = path
        #expect(chmod(path, 0o666) == 0)
        #expect {
            try control.readTrustedKeys()
        } throws: { error in
            (error as? ConfigurationError)?.problem.contains("writable by its group or by others") == true
        }
        #expect(chmod(path, 0o644) == 0)
        #expect(try control.readTrustedKeys() != nil)
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
