import SwiftProtobuf

/// Reads NCMD and DCMD payloads (6.4.19–6.4.20) from the network: size-limited, decoded by swift-protobuf, each
/// metric resolved by alias or name against the catalog and its value converted to the metric's datatype.
/// Every refusal names the metric and what is accepted; nothing here changes state.
package enum SparkplugCommandDecoder {
    /// Commands carry a few metrics; anything larger is refused before decoding.
    package static let maximumPayloadBytes = 16 * 1024

    /// One metric of a command: resolved to the catalog, or refused with the reason.
    package enum Entry: Sendable, Equatable {
        case write(index: Int, value: SparkplugMetricValue)
        case refused(String)
    }

    package static func decode(_ payload: [UInt8]) throws(SparkplugError) -> SparkplugPayload {
        guard payload.count <= maximumPayloadBytes else {
            throw SparkplugError(
                .malformedPayload,
                "a command of \(payload.count) bytes is too large (at most \(maximumPayloadBytes))"
            )
        }
        do {
            return try SparkplugPayload(serializedBytes: payload)
        } catch {
            throw SparkplugError(.malformedPayload, "the command is not a Sparkplug B payload (\(error))")
        }
    }

    /// Resolves each metric of `payload` among `definitions`, whose metric `i` has alias `aliasBase + i`.
    package static func entries(
        of payload: SparkplugPayload,
        definitions: [SparkplugMetricDefinition],
        aliasBase: UInt64,
        index byName: (String) -> Int?
    ) -> [Entry] {
        payload.metrics.map { metric in
            let index: Int?
            let label: String
            if metric.hasAlias {
                let alias = metric.alias
                label = "alias \(alias)"
                index =
                    alias >= aliasBase && alias - aliasBase < UInt64(definitions.count) ? Int(alias - aliasBase) : nil
                if let index, metric.hasName, metric.name != definitions[index].name {
                    return .refused(
                        "metric \"\(metric.name)\" with alias \(alias) names another metric "
                            + "(\"\(definitions[index].name)\"): send the alias or the name of the birth"
                    )
                }
            } else if metric.hasName {
                label = "\"\(metric.name)\""
                index = byName(metric.name)
            } else {
                return .refused("a command metric has neither an alias nor a name")
            }
            guard let index else { return .refused("metric \(label) is not in this birth certificate") }
            let definition = definitions[index]
            if metric.hasDatatype, metric.datatype != UInt32(definition.dataType.rawValue) {
                return .refused(
                    "metric \"\(definition.name)\" is \(definition.dataType.sparkplugName), not datatype \(metric.datatype)"
                )
            }
            guard let value = value(of: metric, as: definition.dataType) else {
                return .refused("metric \"\(definition.name)\" needs a \(definition.dataType.sparkplugName) value")
            }
            return .write(index: index, value: value)
        }
    }

    /// The command value in the metric's datatype; nil when the field sent cannot be read as it (a number for a
    /// boolean, a fraction for an integer, a non-finite number, a null).
    static func value(of metric: SparkplugPayload.Metric, as type: SparkplugDataType) -> SparkplugMetricValue? {
        guard !metric.isNull, let sent = metric.value else { return nil }
        switch type {
        case .boolean:
            if case .booleanValue(let v) = sent { return .boolean(v) }
            return nil
        case .float, .double:
            let number: Double
            switch sent {
            case .floatValue(let v): number = Double(v)
            case .doubleValue(let v): number = v
            case .intValue(let v): number = Double(v)
            case .longValue(let v): number = Double(v)
            default: return nil
            }
            guard number.isFinite else { return nil }
            return type == .float ? .float(Float(number)) : .double(number)
        case .int32, .uint32, .int64, .uint64:
            let bits: UInt64
            switch sent {
            case .intValue(let v): bits = UInt64(v)
            case .longValue(let v): bits = v
            default: return nil
            }
            switch type {
            case .int32: return .int32(Int32(bitPattern: UInt32(truncatingIfNeeded: bits)))
            case .uint32: return bits <= UInt64(UInt32.max) ? .uint32(UInt32(bits)) : nil
            case .int64: return .int64(Int64(bitPattern: bits))
            default: return .uint64(bits)
            }
        case .string, .text:
            if case .stringValue(let v) = sent { return .string(v) }
            return nil
        default:
            return nil
        }
    }
}
