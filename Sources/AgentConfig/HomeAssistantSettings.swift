/// `home_assistant`: MQTT discovery, so the device's sensors appear in Home Assistant by themselves.
package struct HomeAssistantSettings: Sendable, Equatable {
    /// Publish retained discovery configs after every connection. Default false; switching it off removes
    /// the configs an earlier run published (the state directory remembers them).
    package var enabled: Bool = false
    /// Home Assistant's `discovery_prefix` (its MQTT integration's setting). Default `homeassistant`.
    package var discoveryPrefix: String = "homeassistant"

    package init() {}
}
