/// A host's NCMD/DCMD write the edge node accepted for the agent to apply (through the agent's own control
/// door, which validates and records it like any other command): which metric, and the value in the metric's
/// own datatype.
package struct SparkplugWrite: Sendable, Equatable {
    /// nil for a node metric.
    package var deviceID: String?
    package var metricName: String
    package var value: SparkplugMetricValue

    package init(deviceID: String?, metricName: String, value: SparkplugMetricValue) {
        self.deviceID = deviceID
        self.metricName = metricName
        self.value = value
    }
}
