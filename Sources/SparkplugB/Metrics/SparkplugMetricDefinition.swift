/// A metric as births declare it (6.4.4): its name (a `/`-separated folder path), datatype, and the properties
/// hosts show beside it — engineering unit and description (PropertySet keys `engUnit` and `description`, the
/// names Ignition and Cirrus Link's modules read). The alias is assigned by `SparkplugCatalog`, unique across
/// the edge node.
package struct SparkplugMetricDefinition: Sendable, Equatable {
    package var name: String
    package var dataType: SparkplugDataType
    /// Engineering unit, e.g. "g", "rad/s", "µT"; nil for unitless metrics (flags, states, counts of nothing).
    package var unit: String?
    package var description: String?
    /// A host may write it with NCMD/DCMD — only when the operator allows writes (docs/sparkplug.md).
    package var isWritable: Bool

    package init(
        _ name: String,
        _ dataType: SparkplugDataType,
        unit: String? = nil,
        description: String? = nil,
        isWritable: Bool = false
    ) {
        self.name = name
        self.dataType = dataType
        self.unit = unit
        self.description = description
        self.isWritable = isWritable
    }
}
