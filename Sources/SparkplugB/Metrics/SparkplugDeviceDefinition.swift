/// A Sparkplug device of the edge node: its id (a topic level) and every metric it will ever report, in the
/// order its DBIRTH lists them and its writer stores their values.
package struct SparkplugDeviceDefinition: Sendable, Equatable {
    package var id: String
    package var metrics: [SparkplugMetricDefinition]

    package init(id: String, metrics: [SparkplugMetricDefinition]) {
        self.id = id
        self.metrics = metrics
    }
}
