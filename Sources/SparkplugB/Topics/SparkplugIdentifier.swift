/// The ids that become topic levels — group, edge node, device, primary host. The specification (4.1.2–4.1.5)
/// allows any UTF-8 but the MQTT reserved characters; we also refuse what makes a topic ambiguous or a host's tag
/// tree unreadable (empty, NUL, control characters) and anything longer than 256 bytes.
package enum SparkplugIdentifier {
    package static let maximumUTF8Length = 256

    /// Throws `SparkplugError.invalidIdentifier` naming `role` (e.g. "sparkplug.group_id"), the value and what
    /// is allowed.
    package static func validate(_ id: String, role: String) throws(SparkplugError) {
        if id.isEmpty {
            throw SparkplugError(.invalidIdentifier, "\(role) is empty: give a non-empty name")
        }
        if id.utf8.count > maximumUTF8Length {
            throw SparkplugError(
                .invalidIdentifier,
                "\(role) \"\(id.prefix(40))…\" is \(id.utf8.count) bytes long: at most \(maximumUTF8Length) are allowed"
            )
        }
        for scalar in id.unicodeScalars {
            switch scalar {
            case "+", "/", "#":
                throw SparkplugError(
                    .invalidIdentifier,
                    "\(role) \"\(id)\" contains '\(scalar)': Sparkplug ids cannot contain '+', '/' or '#' (MQTT topic "
                        + "separators and wildcards)"
                )
            case _ where scalar.value < 0x20 || scalar.value == 0x7F:
                throw SparkplugError(
                    .invalidIdentifier,
                    "\(role) \"\(id.debugDescription)\" contains a control character: use printable characters only"
                )
            default: continue
            }
        }
    }

    package static func isValid(_ id: String) -> Bool {
        do {
            try validate(id, role: "id")
            return true
        } catch {
            return false
        }
    }
}
