/// The status's account of the configuration, at a glance: the desired versions in force, the last document
/// refused or ignored, and only the settings that are not what the layers ask for — those a command holds
/// and those the hardware changed. Every setting's value and source (`ConfigurationStatus`) is published on its
/// own retained topic, `{root}/configuration`, only when it changes, so a fleet-wide convergence does not fan
/// out a hundred settings per device to everyone who watches the statuses (docs/fleet.md).
public struct ConfigurationSummary: Sendable, Codable, Equatable {
    /// The groups this device applies, in precedence order (`control.groups`).
    public var groups: [String]
    /// Layer (`fleet`, `group lab`, `device`) → the version in force.
    public var desired: [String: Int]
    public var refused: ConfigurationStatus.Refusal?
    /// The last desired document ignored because its version was below the one in force.
    public var ignored: ConfigurationStatus.Refusal?
    /// Keys a command holds over the layers beneath it (`set-rate`, …): key path → value and source. Absent
    /// when there is none.
    public var overrides: [String: ConfigurationStatus.Setting]?
    /// What the hardware made of a requested value (`clamped by hardware to 100 Hz`), per key path. Absent
    /// when there is none.
    public var notes: [String: String]?

    public init(
        groups: [String],
        desired: [String: Int],
        refused: ConfigurationStatus.Refusal? = nil,
        ignored: ConfigurationStatus.Refusal? = nil,
        overrides: [String: ConfigurationStatus.Setting]? = nil,
        notes: [String: String]? = nil
    ) {
        self.groups = groups
        self.desired = desired
        self.refused = refused
        self.ignored = ignored
        self.overrides = overrides
        self.notes = notes
    }

    /// The summary of a full account: its versions and problems, and the settings a command holds or the
    /// hardware changed.
    public init(_ full: ConfigurationStatus) {
        var overrides: [String: ConfigurationStatus.Setting] = [:]
        var notes: [String: String] = [:]
        for (key, setting) in full.settings {
            if setting.source.hasPrefix(ConfigurationStatus.Setting.commandSourcePrefix) {
                overrides[key] = ConfigurationStatus.Setting(value: setting.value, source: setting.source)
            }
            if let note = setting.note { notes[key] = note }
        }
        self.init(
            groups: full.groups,
            desired: full.desired,
            refused: full.refused,
            ignored: full.ignored,
            overrides: overrides.isEmpty ? nil : overrides,
            notes: notes.isEmpty ? nil : notes
        )
    }
}

extension ConfigurationStatus.Setting {
    /// How a command override's source begins: `command 7f1c2a at 2026-11-25T17:02:11Z`.
    public static let commandSourcePrefix = "command "
}
