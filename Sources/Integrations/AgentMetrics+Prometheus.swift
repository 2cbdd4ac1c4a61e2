import AgentPorts
import MotionWire

extension AgentMetrics {
    /// The same figures in the Prometheus text exposition format (version 0.0.4), for node_exporter's
    /// textfile collector: `# HELP` and `# TYPE` before each family, base units in the names (`_seconds`,
    /// `_bytes`), counters ending in `_total`, every sample labelled with the device.
    package func prometheusText() -> String {
        let label = "{device=\"\(Self.escapeLabel(device))\"}"
        var text = ""
        func family(_ name: String, _ type: String, _ help: String, _ value: String, extraLabels: String = "") {
            text += "# HELP motion_agent_\(name) \(help)\n"
            text += "# TYPE motion_agent_\(name) \(type)\n"
            let labels = extraLabels.isEmpty ? label : String(label.dropLast()) + "," + extraLabels + "}"
            text += "motion_agent_\(name)\(labels) \(value)\n"
        }
        func number(_ value: Double) -> String { value.isFinite ? String(value) : "NaN" }
        family(
            "info",
            "gauge",
            "Always 1; the agent's version in a label.",
            "1",
            extraLabels: "version=\"\(Self.escapeLabel(agentVersion))\""
        )
        family("uptime_seconds", "gauge", "Seconds since the agent started.", number(uptimeSeconds))
        family(
            "boots_total",
            "counter",
            "Starts with this state directory (the status document's bootCount).",
            String(bootCount)
        )
        family("samples_read_total", "counter", "Sensor readings received.", String(samples.read))
        family(
            "samples_invalid_total",
            "counter",
            "Sensor readings dropped because a value was NaN or infinite.",
            String(samples.invalid)
        )
        family(
            "messages_enqueued_total",
            "counter",
            "Messages the streams queued for the broker.",
            String(messages.enqueued)
        )
        family("messages_published_total", "counter", "Messages the MQTT client accepted.", String(messages.published))
        family(
            "messages_failed_total",
            "counter",
            "Messages the MQTT client refused as invalid.",
            String(messages.failed)
        )
        family(
            "messages_rejected_total",
            "counter",
            "Messages the outbox refused (too large or unknown topic).",
            String(messages.rejected)
        )
        family(
            "messages_dropped_total",
            "counter",
            "Oldest queued messages dropped because the outbox was full.",
            String(messages.droppedOverflow)
        )
        family(
            "messages_expired_total",
            "counter",
            "Queued messages dropped unsent because they waited longer than their stream's expiry_s.",
            String(messages.droppedExpired ?? 0)
        )
        family("outbox_messages", "gauge", "Messages waiting in the outbox.", String(outbox.depth))
        family("outbox_bytes", "gauge", "Bytes waiting in the outbox.", String(outbox.bytes))
        family("connected", "gauge", "1 while connected to the broker.", connection.connected ? "1" : "0")
        family(
            "reconnects_total",
            "counter",
            "Connections to the broker after the first.",
            String(connection.reconnects)
        )
        family("connection_failures_total", "counter", "Failed connection attempts.", String(connection.failures))
        family(
            "failovers_total",
            "counter",
            "Moves to the next broker of mqtt.servers.",
            String(connection.failovers ?? 0)
        )
        family(
            "inbound_dropped_total",
            "counter",
            "Inbound messages dropped because the agent could not keep up (a control-topic flood).",
            String(connection.inboundDropped)
        )
        family(
            "inbound_over_budget_total",
            "counter",
            "Of inbound_dropped_total, messages refused because the inbound queues held their byte budget.",
            String(connection.inboundOverBudget ?? 0)
        )
        family(
            "inbound_oversize_total",
            "counter",
            "Inbound messages larger than the agent's maximum packet size, dropped before they were copied.",
            String(connection.inboundOversize ?? 0)
        )
        family("cpu_seconds_total", "counter", "User and system CPU time.", number(process.cpuSeconds))
        family(
            "cpu_usage_ratio",
            "gauge",
            "CPU time over the last interval as a fraction of one core.",
            number(process.cpuPercent / 100)
        )
        family("resident_memory_bytes", "gauge", "Resident memory (VmRSS).", String(process.rssBytes))
        if let durable {
            family(
                "durable_dropped_total",
                "counter",
                "Durable messages discarded unacknowledged (bounds, a full file system, a failed write).",
                String(durable.dropped)
            )
            family(
                "durable_dropped_no_space_total",
                "counter",
                "Durable messages that never reached the disk (its file system was full or a write failed).",
                String(durable.droppedNoSpace)
            )
            family(
                "durable_expired_total",
                "counter",
                "Durable messages not sent because they were older than their stream's expiry_s.",
                String(durable.expired ?? 0)
            )
            family("durable_messages", "gauge", "Durable messages not yet acknowledged.", String(durable.depth))
            family(
                "durable_storage_problem",
                "gauge",
                "1 while the durable outbox cannot keep everything (its file system is full); the log and health.json say why.",
                durable.storageProblem == nil ? "0" : "1"
            )
        }
        // One family per counter, one line per device (a family's HELP and TYPE appear once).
        let deviceIDs = devices.keys.sorted()
        let perDevice: [(String, String, KeyPath<SensorDeviceCounters, UInt64>)] = [
            ("sensor_samples_total", "Samples a sensor device delivered.", \.samples),
            (
                "sensor_nonfinite_total", "Readings dropped because the converted value was NaN or infinite.",
                \.nonFinite
            ),
            ("sensor_saturated_total", "Samples at the channel's raw limit (the sensor clipped).", \.saturated),
            (
                "sensor_timestamps_backwards_total", "Samples dropped because time did not advance.",
                \.timestampsBackwards
            ),
            ("sensor_read_errors_total", "Buffer refills, polls or set-ups that failed.", \.readErrors),
            ("sensor_recoveries_total", "Times a device delivered again after failing.", \.recoveries),
        ]
        for (name, help, keyPath) in perDevice where !deviceIDs.isEmpty {
            text += "# HELP motion_agent_\(name) \(help)\n"
            text += "# TYPE motion_agent_\(name) counter\n"
            for id in deviceIDs {
                let labels = String(label.dropLast()) + ",sensor_device=\"\(Self.escapeLabel(id))\"}"
                text += "motion_agent_\(name)\(labels) \(devices[id]![keyPath: keyPath])\n"
            }
        }
        return text
    }

    /// Label values escape backslash, double quote and line feed (the exposition format's only escapes).
    static func escapeLabel(_ value: String) -> String {
        var out = ""
        for c in value {
            switch c {
            case "\\": out += "\\\\"
            case "\"": out += "\\\""
            case "\n": out += "\\n"
            default: out.append(c)
            }
        }
        return out
    }
}
