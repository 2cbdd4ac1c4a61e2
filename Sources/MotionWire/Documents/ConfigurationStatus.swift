/// Why the device runs what it runs, in the retained status (birth, goodbye, the `status` reply): every runtime
/// setting with its effective value and source, the desired versions in force per layer, and the last document
/// that was refused or ignored as older. `motion-agent fleet status` reads it; `check-config --explain` prints the same table.
public struct ConfigurationStatus: Sendable, Codable, Equatable {
    public struct Setting: Sendable, Codable, Equatable {
        /// As config.yaml writes it (`100`, `true`, `binary`).
        public var value: String
        /// `config.yaml`, `fleet v12`, `group lab v3`, `device v7`, `command 7f1c2a at 2026-11-25T17:02:11Z`.
        public var source: String
        /// What the hardware made of it, when that differs (`clamped by hardware to 100 Hz`).
        public var note: String?

        public init(
            value: String,
            source: String,
            note: String? = nil
        ) {
            self.value = value
            self.source = source
            self.note = note
        }
    }

    /// A desired document that was not applied, and why.
    public struct Refusal: Sendable, Codable, Equatable {
        /// `fleet`, `group lab`, `device`.
        public var layer: String
        /// Its version, when it had a readable one.
        public var version: Int?
        public var reason: String
        /// When it arrived, Unix seconds.
        public var time: Double

        public init(
            layer: String,
            version: Int? = nil,
            reason: String,
            time: Double
        ) {
            self.layer = layer
            self.version = version
            self.reason = reason
            self.time = time
        }
    }

    /// The groups this device applies, in precedence order (`control.groups`).
    public var groups: [String]
    /// Layer (`fleet`, `group lab`, `device`) → the version in force.
    public var desired: [String: Int]
    public var refused: Refusal?
    /// The last desired document ignored because its version was below the one in force.
    public var ignored: Refusal?
    /// Runtime key path (`streams.accelerometer.rate_hz`) → its effective value and source.
    public var settings: [String: Setting]

    public init(
        groups: [String],
        desired: [String: Int],
        refused: Refusal? = nil,
        ignored: Refusal? = nil,
        settings: [String: Setting]
    ) {
        self.groups = groups
        self.desired = desired
        self.refused = refused
        self.ignored = ignored
        self.settings = settings
    }
}
