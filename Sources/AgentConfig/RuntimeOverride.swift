/// One key a control command set, on top of every desired layer. It holds until a layer beneath writes the
/// same key again — a newer desired document or a config.yaml edit that changes that key's value — so the
/// last writer of each key wins, by arrival, and a command pins only what it names.
package struct RuntimeOverride: Sendable, Equatable, Codable {
    /// The value, in canonical form.
    package var value: String
    /// The command's id, for provenance and the operator's audit.
    package var commandID: String
    /// When the command arrived (Unix seconds).
    package var time: Double
    /// What each layer beneath said for this key when the command arrived (`config.yaml` → `50`,
    /// `fleet` → `100`); a layer that says something else later has written the key after the command.
    package var beneath: [String: String]

    package init(value: String, commandID: String, time: Double, beneath: [String: String]) {
        self.value = value
        self.commandID = commandID
        self.time = time
        self.beneath = beneath
    }
}
