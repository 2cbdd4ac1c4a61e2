/// `metrics`: the agent's health report on `{root}/metrics` and, when a path is set, as a Prometheus textfile
/// for node_exporter's textfile collector.
package struct MetricsSettings: Sendable, Equatable {
    /// Seconds between reports, 1…3600; 0 switches the report (topic and file) off. Default 60.
    package var intervalS: Int = 60
    /// Where the Prometheus text exposition is written (atomically: temporary file, then rename); `nil`, the
    /// default, writes none. node_exporter reads `*.prom` files from its `--collector.textfile.directory`.
    package var prometheusFile: String? = nil

    package init() {}
}
