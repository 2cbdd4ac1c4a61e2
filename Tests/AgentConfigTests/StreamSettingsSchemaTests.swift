import AgentPorts
import Testing

@testable import AgentConfig

/// The config schema's `streams` section follows the stream table, and what needs a restart follows the schema.
@Suite struct StreamSettingsSchemaTests {
    @Test func everyKeyADescriptorNamesHasAField() {
        for descriptor in StreamDescriptor.table {
            for key in descriptor.settingKeys {
                #expect(
                    ConfigurationSchema.streamField(key, descriptor.name) != nil,
                    "streams.\(descriptor.name.rawValue).\(key)"
                )
                #expect(ConfigurationSchema.runtimeField(at: "streams.\(descriptor.name.rawValue).\(key)") != nil)
            }
        }
    }

    @Test func theRefusalOfAnotherKeyListsTheRuntimeKeys() {
        #expect(
            ConfigurationSchema.runtimeKeysText
                == "streams.<stream>.enabled, rate_hz, qos, retain, durable, expiry_s, batch, encoding, "
                + "streams.device-motion.reference_frame, reference_attitude, "
                + "streams.events.falls, impacts, free_falls, tilt, impact_threshold_g, fall_response_s, "
                + "tilt_cone_degrees, metrics.interval_s"
        )
    }

    @Test func whatNeedsARestartFollowsTheSchema() {
        let running = AgentConfiguration()
        var new = running
        #expect(new.restartRequired(from: running) == [])
        new.streams[.gyroscope]?.rateHz = 200
        new.metrics.intervalS = 10
        new.deviceMotion.referenceFrame = .xArbitraryCorrectedZVertical
        #expect(new.restartRequired(from: running) == [], "runtime keys apply at once")
        new.mqtt.port = 8883
        new.source.simulated.seed = 7
        new.metrics.prometheusFile = "/tmp/agent.prom"
        new.homeAssistant.enabled = true
        #expect(
            new.restartRequired(from: running) == ["source", "mqtt", "metrics.prometheus_file", "home_assistant"]
        )
    }
}
