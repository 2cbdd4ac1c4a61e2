import SwiftProtobuf

/// Births and deaths, through swift-protobuf: rare messages where clarity beats the last allocation. A birth
/// lists every metric with name, alias, datatype, current value (or `is_null`), the value's timestamp and the
/// `engUnit` / `description` properties (6.4.4, 6.4.6; Ignition and Cirrus Link's modules read those keys).
/// Bodies leave out the payload timestamp and `seq`: `SparkplugStamp` adds them when the message is published.
package enum SparkplugBirthEncoder {
    /// The property key hosts read a metric's engineering unit from.
    package static let unitProperty = "engUnit"
    package static let descriptionProperty = "description"

    /// The NBIRTH body: the node's metrics, `values[i]` for `catalog.nodeMetrics[i]`.
    package static func nodeBirth(
        catalog: SparkplugCatalog,
        values: [SparkplugMetricValue],
        timestampsMs: [UInt64]
    ) -> [UInt8] {
        var payload = SparkplugPayload()
        payload.metrics = catalog.nodeMetrics.indices.map { i in
            metric(
                catalog.nodeMetrics[i],
                alias: catalog.nodeAlias(i),
                value: values[i],
                timestampMs: timestampsMs[i]
            )
        }
        return serialize(payload)
    }

    /// The DBIRTH body of `catalog.devices[device]`, `values[i]` for its metric `i`.
    package static func deviceBirth(
        catalog: SparkplugCatalog,
        device: Int,
        values: [SparkplugMetricValue],
        timestampsMs: [UInt64]
    ) -> [UInt8] {
        let definition = catalog.devices[device]
        let base = catalog.aliasBase(ofDevice: device)
        var payload = SparkplugPayload()
        payload.metrics = definition.metrics.indices.map { i in
            metric(definition.metrics[i], alias: base + UInt64(i), value: values[i], timestampMs: timestampsMs[i])
        }
        return serialize(payload)
    }

    /// The complete NDEATH (the MQTT will, or published before a deliberate disconnect): the payload timestamp
    /// and the bdSeq metric by name, Int64 (6.4.21, 5.4), and no `seq`.
    package static func nodeDeath(birthDeathSequence: UInt8, timestampMs: UInt64) -> [UInt8] {
        var bdSeq = SparkplugPayload.Metric()
        bdSeq.name = SparkplugCatalog.NodeMetric.birthDeathSequence
        bdSeq.timestamp = timestampMs
        bdSeq.datatype = UInt32(SparkplugDataType.int64.rawValue)
        bdSeq.longValue = UInt64(birthDeathSequence)
        var payload = SparkplugPayload()
        payload.timestamp = timestampMs
        payload.metrics = [bdSeq]
        return serialize(payload)
    }

    /// A DDEATH carries no metrics: its body is empty until stamped with timestamp and `seq`.
    package static let deviceDeath: [UInt8] = []

    static func metric(
        _ definition: SparkplugMetricDefinition,
        alias: UInt64,
        value: SparkplugMetricValue,
        timestampMs: UInt64
    ) -> SparkplugPayload.Metric {
        var metric = SparkplugPayload.Metric()
        metric.name = definition.name
        metric.alias = alias
        metric.timestamp = timestampMs
        metric.datatype = UInt32(definition.dataType.rawValue)
        setValue(value, on: &metric)
        var properties = SparkplugPayload.PropertySet()
        if let unit = definition.unit { add(unitProperty, unit, to: &properties) }
        if let description = definition.description { add(descriptionProperty, description, to: &properties) }
        if !properties.keys.isEmpty { metric.properties = properties }
        return metric
    }

    /// Puts `value` in the field its datatype names (or `is_null`).
    package static func setValue(_ value: SparkplugMetricValue, on metric: inout SparkplugPayload.Metric) {
        switch value {
        case .boolean(let v): metric.booleanValue = v
        case .int32(let v): metric.intValue = UInt32(bitPattern: v)
        case .uint32(let v): metric.intValue = v
        case .int64(let v): metric.longValue = UInt64(bitPattern: v)
        case .uint64(let v), .dateTime(let v): metric.longValue = v
        case .float(let v): metric.floatValue = v
        case .double(let v): metric.doubleValue = v
        case .string(let v): metric.stringValue = v
        case .null: metric.isNull = true
        }
    }

    private static func add(_ key: String, _ text: String, to properties: inout SparkplugPayload.PropertySet) {
        var value = SparkplugPayload.PropertyValue()
        value.type = UInt32(SparkplugDataType.string.rawValue)
        value.stringValue = text
        properties.keys.append(key)
        properties.values.append(value)
    }

    private static func serialize(_ payload: SparkplugPayload) -> [UInt8] {
        // Serialization of a message whose required fields are all set cannot fail (Sparkplug has none).
        do {
            return try payload.serializedBytes()
        } catch {
            preconditionFailure("serializing a Sparkplug payload failed: \(error)")
        }
    }
}
