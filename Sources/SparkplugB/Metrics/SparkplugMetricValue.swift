/// One metric value as the agent holds it, before it is put on the wire in the field its datatype names
/// (6.4.16): `int_value` for Int8–UInt32 and Boolean-free integers up to 32 bits, `long_value` for the 64-bit
/// integers and DateTime, `float_value`, `double_value`, `boolean_value`, `string_value`. No case allocates but
/// `string` with a string built at run time; the motion catalog only stores literals there.
package enum SparkplugMetricValue: Sendable, Equatable {
    case boolean(Bool)
    case int32(Int32)
    case int64(Int64)
    case uint32(UInt32)
    case uint64(UInt64)
    case float(Float)
    case double(Double)
    case string(String)
    /// Milliseconds since the Unix epoch, UTC (Sparkplug's DateTime).
    case dateTime(UInt64)
    /// No value (`is_null`): a nullable metric without one, e.g. pace while not walking.
    case null

    /// Whether the value can be carried by a metric of `dataType`.
    package func fits(_ dataType: SparkplugDataType) -> Bool {
        switch (self, dataType) {
        case (.null, _): true
        case (.boolean, .boolean): true
        case (.int32, .int32), (.int64, .int64), (.uint32, .uint32), (.uint64, .uint64): true
        case (.float, .float), (.double, .double): true
        case (.string, .string), (.string, .text): true
        case (.dateTime, .dateTime): true
        default: false
        }
    }

    /// The datatype a birth gives a metric holding this value (nil for `null`, which has none of its own).
    package var naturalDataType: SparkplugDataType? {
        switch self {
        case .boolean: .boolean
        case .int32: .int32
        case .int64: .int64
        case .uint32: .uint32
        case .uint64: .uint64
        case .float: .float
        case .double: .double
        case .string: .string
        case .dateTime: .dateTime
        case .null: nil
        }
    }
}
