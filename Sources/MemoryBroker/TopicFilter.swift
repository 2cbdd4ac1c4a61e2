/// MQTT topic names and filters (MQTT 5 §4.7): validation as libmosquitto does it before sending, and matching
/// as the broker does it, without allocating (a simulation routes millions of messages).
enum TopicFilter {
    /// Whether `topic` may be published to: not empty, no wildcard, no NUL (libmosquitto answers
    /// MOSQ_ERR_INVAL, which the port reports as permanent).
    static func isValidTopicName(_ topic: String) -> Bool {
        guard !topic.isEmpty else { return false }
        for byte in topic.utf8 where byte == plus || byte == hash || byte == 0 {
            return false
        }
        return true
    }

    /// Whether `filter` may be subscribed to: not empty, `+` alone in its level, `#` alone in the last level.
    static func isValidFilter(_ filter: String) -> Bool {
        let bytes = Array(filter.utf8)
        guard !bytes.isEmpty else { return false }
        for (index, byte) in bytes.enumerated() {
            if byte == 0 { return false }
            guard byte == plus || byte == hash else { continue }
            let startsLevel = index == 0 || bytes[index - 1] == slash
            let endsLevel = index == bytes.count - 1 || bytes[index + 1] == slash
            guard startsLevel && endsLevel else { return false }
            if byte == hash && index != bytes.count - 1 { return false }
        }
        return true
    }

    /// Whether `topic` matches `filter`. A filter starting with a wildcard does not match a topic starting with
    /// `$` (MQTT 5 §4.7.2: `$SYS/…` is not matched by `#` or `+/…`).
    static func matches(filter: String, topic: String) -> Bool {
        var filterBytes = filter.utf8.makeIterator()
        var topicBytes = topic.utf8.makeIterator()
        var f = filterBytes.next()
        var t = topicBytes.next()
        if t == dollar, f == plus || f == hash { return false }
        while true {
            switch f {
            case nil:
                return t == nil
            case hash:
                // `#` is the last level: it matches the parent level too ("a/#" matches "a").
                return true
            case plus:
                // Skip one topic level (possibly empty).
                while let byte = t, byte != slash { t = topicBytes.next() }
                f = filterBytes.next()
            default:
                guard let topicByte = t else {
                    // The topic ended: "a/#" still matches "a" when the filter's rest is exactly "/#".
                    guard f == slash, filterBytes.next() == hash, filterBytes.next() == nil else { return false }
                    return true
                }
                guard topicByte == f else { return false }
                f = filterBytes.next()
                t = topicBytes.next()
            }
        }
    }

    private static let plus = UInt8(ascii: "+")
    private static let hash = UInt8(ascii: "#")
    private static let slash = UInt8(ascii: "/")
    private static let dollar = UInt8(ascii: "$")
}
