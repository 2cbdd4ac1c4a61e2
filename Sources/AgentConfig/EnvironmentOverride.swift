/// An environment variable that replaces one config.yaml value, for containers where the file is baked into
/// the image and the broker and its secret differ per deployment. The value is checked exactly like the
/// file's, and errors name the variable. An empty variable counts as unset (compose files often write
/// `MOTION_AGENT_MQTT_HOST=` for "not given").
package struct EnvironmentOverride: Sendable, Equatable {
    /// The variable, e.g. `MOTION_AGENT_MQTT_PORT`.
    package let variable: String
    /// The option it replaces, e.g. `mqtt.port`.
    package let keyPath: String

    /// Every override, in the order they are applied.
    package static let all: [EnvironmentOverride] = [
        EnvironmentOverride(variable: "MOTION_AGENT_MQTT_HOST", keyPath: "mqtt.host"),
        EnvironmentOverride(variable: "MOTION_AGENT_MQTT_PORT", keyPath: "mqtt.port"),
        EnvironmentOverride(variable: "MOTION_AGENT_MQTT_PASSWORD_FILE", keyPath: "mqtt.password_file"),
        // A container's host name is random per start; a fleet sets the device id per container instead.
        EnvironmentOverride(variable: "MOTION_AGENT_DEVICE_ID", keyPath: "device.id"),
    ]
}
