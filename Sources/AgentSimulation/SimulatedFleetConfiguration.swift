import AgentConfig
import AgentPorts

/// config.yaml for a simulated device: the broker(s) by their in-memory names, the streams at the rates fleets
/// use (1–10 Hz: the simulation is after the control and delivery paths, not the estimators), everything else at
/// config.yaml's defaults. The text goes through `ConfigurationLoader`, as a device's file does.
package struct SimulatedFleetConfiguration: Sendable, Codable {
    package struct Stream: Sendable, Codable {
        package var name: String
        package var rateHz: Double
        package var qos: Int
        package var durable: Bool
        package var batch: Int

        package init(_ name: String, rateHz: Double, qos: Int = 0, durable: Bool = false, batch: Int = 1) {
            self.name = name
            self.rateHz = rateHz
            self.qos = qos
            self.durable = durable
            self.batch = batch
        }
    }

    /// Broker names (`MemoryBroker.name`), all on port 1883; more than one becomes `mqtt.servers`.
    package var brokers: [String] = ["broker"]
    package var groups: [String] = []
    /// The enabled streams; every other stream is off.
    package var streams: [Stream] = [Stream("accelerometer", rateHz: 2)]
    package var metricsIntervalS = 30
    package var cleanSession = true
    package var outboxMaxBytes = 8 << 20
    package var reconnectMaxDelay = 10.0
    /// Extra YAML appended at the top level (a section that is not otherwise set here).
    package var extra = ""

    package init() {}

    /// Every stream of the agent, from its table (a hand list missed the events stream).
    static let allStreams = StreamName.allCases.map(\.rawValue)

    package func yaml(deviceID: String) -> String {
        var text = """
            device:
              id: \(deviceID)
            agent:
              state_dir: /var/lib/motion-agent
            mqtt:
              port: 1883
              clean_session: \(cleanSession)
              reconnect_min_delay: 0.5
              reconnect_max_delay: \(reconnectMaxDelay)

            """
        if brokers.count > 1 {
            text += "  servers: [\(brokers.map { "\($0):1883" }.joined(separator: ", "))]\n"
        } else {
            text += "  host: \(brokers[0])\n"
        }
        text += """
            control:
              groups: [\(groups.joined(separator: ", "))]
            outbox:
              max_bytes: \(outboxMaxBytes)
            metrics:
              interval_s: \(metricsIntervalS)
            streams:

            """
        for name in Self.allStreams {
            if let stream = streams.first(where: { $0.name == name }) {
                text += """
                      \(name):
                        enabled: true
                        rate_hz: \(stream.rateHz)
                        qos: \(stream.qos)
                        durable: \(stream.durable)

                    """
                if stream.batch > 1 { text += "    batch: \(stream.batch)\n" }
            } else {
                text += "  \(name):\n    enabled: false\n"
            }
        }
        return text + extra
    }

    /// The configuration a device reads from `yaml(deviceID:)`.
    package func configuration(deviceID: String) throws(ConfigurationError) -> AgentConfiguration {
        try ConfigurationLoader.decode(yaml: yaml(deviceID: deviceID), source: "simulated config.yaml (\(deviceID))")
    }
}
