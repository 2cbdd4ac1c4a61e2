/// A Sparkplug device of the edge node: its id (a topic level) and every metric it will ever report, in the
/// order its DBIRTH lists them and its writer stores their values.
public struct SparkplugDeviceDefinition: Sendable, Equatable {
    public var id: String
    public var metrics: [SparkplugMetricDefinition]

    public init(id: String, metrics: [SparkplugMetricDefinition]) {
        self.id = id
        self.metrics = metrics
    }
}
