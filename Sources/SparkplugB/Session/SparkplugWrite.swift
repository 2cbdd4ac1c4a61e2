/// A host's NCMD/DCMD write the edge node accepted for the agent to apply (through the agent's own control
/// door, which validates and records it like any other command): which metric, and the value in the metric's
/// own datatype.
public struct SparkplugWrite: Sendable, Equatable {
    /// nil for a node metric.
    public var deviceID: String?
    public var metricName: String
    public var value: SparkplugMetricValue

    public init(deviceID: String?, metricName: String, value: SparkplugMetricValue) {
        self.deviceID = deviceID
        self.metricName = metricName
        self.value = value
    }
}
