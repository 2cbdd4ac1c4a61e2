import Foundation
import Testing

@testable import AgentConfig

@Suite struct EnvironmentOverrideTests {
    @Test func overridesReplaceTheFileValues() throws {
        let directory = try TemporaryDirectory()
        let password = try directory.writeSecret("password", "from-env\n")
        let yaml =
            "device:\n  id: from-file\nmqtt:\n  host: file.example\n  port: 1884\n  password_file: /nonexistent/pw\n"
        let configuration = try ConfigurationLoader.decode(
            yaml: yaml,
            environment: [
                "MOTION_AGENT_MQTT_HOST": "env.example",
                "MOTION_AGENT_MQTT_PORT": " 8883\r\n",
                "MOTION_AGENT_MQTT_PASSWORD_FILE": password,
                "MOTION_AGENT_DEVICE_ID": "container-7",
                "UNRELATED": "x",
            ]
        )
        #expect(configuration.mqtt.host == "env.example")
        #expect(configuration.mqtt.port == 8883)
        // The file's unreadable password file is replaced before files are checked, so it is no error.
        #expect(configuration.mqtt.passwordFile == password)
        #expect(try configuration.mqtt.readPassword() == "from-env")
        #expect(configuration.device.id == "container-7")
        #expect(configuration.resolvedTopicRoot == "motion/container-7")
    }

    @Test func emptyVariablesAreIgnored() throws {
        let configuration = try ConfigurationLoader.decode(
            yaml: "mqtt:\n  host: file.example\n",
            environment: ["MOTION_AGENT_MQTT_HOST": "", "MOTION_AGENT_MQTT_PORT": ""]
        )
        #expect(configuration.mqtt.host == "file.example")
        #expect(configuration.mqtt.port == 1883)
    }

    @Test(arguments: [
        ("MOTION_AGENT_MQTT_PORT", "abc", "mqtt.port", ConfigurationError.Kind.wrongType),
        ("MOTION_AGENT_MQTT_PORT", "0", "mqtt.port", .outOfRange),
        ("MOTION_AGENT_MQTT_PORT", "70000", "mqtt.port", .outOfRange),
        ("MOTION_AGENT_MQTT_HOST", "tcp://broker", "mqtt.host", .invalidValue),
        ("MOTION_AGENT_MQTT_PASSWORD_FILE", "/nonexistent/password", "mqtt.password_file", .fileUnavailable),
        ("MOTION_AGENT_DEVICE_ID", "a/b", "device.id", .invalidValue),
    ])
    func invalidValuesNameTheVariable(
        _ variable: String,
        _ value: String,
        _ keyPath: String,
        _ kind: ConfigurationError.Kind
    ) throws {
        let error = try #require(decodingError("mqtt:\n  username: agent\n", environment: [variable: value]))
        #expect(error.errors.count == 1, "\(error)")
        #expect(error.kind == kind)
        #expect(error.keyPath == keyPath)
        #expect(error.variable == variable)
        #expect(error.value == value)
        #expect(error.line == nil)
        #expect(error.file == nil)
        #expect(error.description.hasPrefix("environment \(variable) (\(keyPath)): "), "\(error)")
    }

    @Test func environmentProblemsFollowTheFileProblems() throws {
        let error = try #require(
            decodingError(
                "streams:\n  gyroscope:\n    qos: 9\n",
                environment: ["MOTION_AGENT_MQTT_PORT": "-1"]
            )
        )
        #expect(error.errors.map(\.keyPath) == ["streams.gyroscope.qos", "mqtt.port"])
        #expect(error.errors.map(\.variable) == [nil, "MOTION_AGENT_MQTT_PORT"])
    }

    @Test func relativePasswordFilesFromTheEnvironmentAreRelativeToTheWorkingDirectory() throws {
        // A password file must be readable by its owner only; the relative path climbs from the working directory
        // to the root and down to a temporary one, so it names that file only when resolved from the working directory.
        let directory = try TemporaryDirectory()
        let password = try directory.writeSecret("password", "pw\n")
        let workingDirectory = FileManager.default.currentDirectoryPath
        let climb = String(repeating: "../", count: workingDirectory.split(separator: "/").count)
        let relative = climb + password.drop { $0 == "/" }
        let configuration = try ConfigurationLoader.decode(
            yaml: "",
            environment: ["MOTION_AGENT_MQTT_PASSWORD_FILE": relative]
        )
        #expect(configuration.mqtt.passwordFile == password)
    }

    @Test func everyOverrideNamesAnExistingKey() {
        for override in EnvironmentOverride.all {
            #expect(ConfigurationSchema.field(at: override.keyPath) != nil, "\(override.keyPath)")
        }
    }
}
