import AgentPorts
import Foundation
import Integrations
import MotionWire
import TestSupport
import Testing

@Suite struct MetricsTests {
    static func metrics(device: String = "imu-17") throws -> AgentMetrics {
        AgentMetrics(
            device: device,
            time: 1_763_700_000.5,
            uptimeSeconds: 61.25,
            bootCount: 4,
            intervalSeconds: 60,
            samples: .init(read: 5000, invalid: 3),
            messages: .init(
                enqueued: 1200,
                published: 1100,
                failed: 1,
                rejected: 2,
                droppedOverflow: 80,
                droppedExpired: nil
            ),
            outbox: .init(depth: 17, bytes: 2048),
            // Three connections are two reconnects; two inbound messages dropped by the control inbox, five by
            // the client.
            connection: .init(
                connected: true,
                reconnects: 2,
                failures: 1,
                inboundDropped: 7,
                server: nil,
                failovers: nil
            ),
            process: AgentMetrics.Process(cpuPercent: 12.5, cpuSeconds: 3.25, rssBytes: 40_140_800),
            devices: [:],
            durable: nil
        )
    }

    @Test func thePrometheusTextParsesStrictlyWithUnitsInTheNames() throws {
        let families = try PrometheusTextParser.parse(try Self.metrics().prometheusText())
        var values: [String: Double] = [:]
        for family in families {
            #expect(family.name.hasPrefix("motion_agent_"))
            #expect(!family.help.isEmpty)
            for sample in family.samples {
                #expect(sample.labels["device"] == "imu-17")
                values[sample.name] = sample.value
            }
        }
        #expect(values["motion_agent_samples_read_total"] == 5000)
        #expect(values["motion_agent_samples_invalid_total"] == 3)
        #expect(values["motion_agent_messages_published_total"] == 1100)
        #expect(values["motion_agent_messages_failed_total"] == 1)
        #expect(values["motion_agent_messages_dropped_total"] == 80)
        #expect(values["motion_agent_outbox_messages"] == 17)
        #expect(values["motion_agent_outbox_bytes"] == 2048)
        #expect(values["motion_agent_reconnects_total"] == 2)
        #expect(values["motion_agent_connection_failures_total"] == 1)
        #expect(values["motion_agent_inbound_dropped_total"] == 7)
        #expect(values["motion_agent_cpu_usage_ratio"] == 0.125)
        #expect(values["motion_agent_cpu_seconds_total"] == 3.25)
        #expect(values["motion_agent_resident_memory_bytes"] == 40_140_800)
        #expect(values["motion_agent_uptime_seconds"] == 61.25)
        #expect(values["motion_agent_boots_total"] == 4)
        #expect(
            families.first { $0.name == "motion_agent_info" }?.samples.first?.labels["version"] == AgentVersion.version
        )
    }

    @Test func sensorDeviceCountersAreOneFamilyEachWithALinePerDevice() throws {
        var metrics = try Self.metrics()
        metrics.devices = [
            "iio:device1": SensorDeviceCounters(samples: 900, readErrors: 2, recoveries: 1),
            "iio:device0": SensorDeviceCounters(samples: 1000, nonFinite: 3, saturated: 7, timestampsBackwards: 1),
        ]
        let families = try PrometheusTextParser.parse(metrics.prometheusText())
        func value(_ family: String, _ device: String) -> Double? {
            families.first { $0.name == family }?.samples.first { $0.labels["sensor_device"] == device }?.value
        }
        #expect(value("motion_agent_sensor_samples_total", "iio:device0") == 1000)
        #expect(value("motion_agent_sensor_samples_total", "iio:device1") == 900)
        #expect(value("motion_agent_sensor_nonfinite_total", "iio:device0") == 3)
        #expect(value("motion_agent_sensor_saturated_total", "iio:device0") == 7)
        #expect(value("motion_agent_sensor_timestamps_backwards_total", "iio:device0") == 1)
        #expect(value("motion_agent_sensor_read_errors_total", "iio:device1") == 2)
        #expect(value("motion_agent_sensor_recoveries_total", "iio:device1") == 1)
        #expect(families.first { $0.name == "motion_agent_sensor_samples_total" }?.type == "counter")
        // Without devices (simulator, replay) the families are absent rather than empty.
        let plain = try PrometheusTextParser.parse(try Self.metrics().prometheusText())
        #expect(!plain.contains { $0.name.hasPrefix("motion_agent_sensor_") })
        // And the JSON report carries the same counters.
        let json = try JSONSerialization.jsonObject(with: JSONEncoder().encode(metrics)) as? [String: Any]
        let devices = try #require(json?["devices"] as? [String: [String: Any]])
        #expect(devices["iio:device0"]?["saturated"] as? Int == 7)
    }

    @Test func labelValuesAreEscaped() throws {
        let device = "lab \"7\"\\east\nwing"
        let families = try PrometheusTextParser.parse(try Self.metrics(device: device).prometheusText())
        #expect(families.allSatisfy { $0.samples.allSatisfy { $0.labels["device"] == device } })
    }

    @Test(arguments: [
        ("motion_x_total{device=\"a\"} 1\n", "a sample before its HELP and TYPE"),
        (
            "# HELP a_total x\n# TYPE a_total counter\na_total{device=\"a\"} 1\n# HELP b x\n# TYPE b gauge\nb 1\na_total 2\n",
            "family not contiguous"
        ),
        ("# HELP a x\n# TYPE a counter\na 1\n", "a counter without _total"),
        ("# HELP 1a x\n# TYPE 1a gauge\n1a 1\n", "a name starting with a digit"),
        ("# HELP a x\n# TYPE a gauge\na{de-vice=\"x\"} 1\n", "a label name with a dash"),
        ("# HELP a x\n# TYPE a gauge\na{device=\"x} 1\n", "an unterminated label value"),
        ("# HELP a x\n# TYPE a gauge\na{device=\"x\\t\"} 1\n", "an escape the format lacks"),
        ("# HELP a x\n# TYPE a gauge\na 1,5\n", "a comma decimal"),
        ("# HELP a x\n# TYPE a gauge\na 1", "no final line feed"),
        ("# HELP a x\n# TYPE a gauge\na 1\na 2\n", "a duplicate series"),
        ("# TYPE a gauge\na 1\n", "TYPE without HELP"),
    ])
    func theParserRefuses(text: String, what: String) {
        #expect(throws: PrometheusTextParser.Failure.self, "\(what)") { try PrometheusTextParser.parse(text) }
    }

    @Test func theMetricsDocumentCarriesTheCounters() throws {
        let json = try JSONSerialization.jsonObject(with: JSONEncoder().encode(try Self.metrics())) as? [String: Any]
        let messages = try #require(json?["messages"] as? [String: Any])
        #expect(messages["droppedOverflow"] as? Int == 80)
        #expect((json?["connection"] as? [String: Any])?["reconnects"] as? Int == 2)
        #expect((json?["connection"] as? [String: Any])?["inboundDropped"] as? Int == 7)
        #expect((json?["process"] as? [String: Any])?["rssBytes"] as? Int == 40_140_800)
    }
}
