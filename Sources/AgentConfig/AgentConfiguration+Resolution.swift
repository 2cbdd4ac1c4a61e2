import Foundation

/// The values the agent uses, derived from the settings: templates with `{device}` filled in, the state
/// directory chosen and created.
extension AgentConfiguration {
    /// `mqtt.client_id` with `{device}` replaced by `device.id`.
    package var resolvedClientID: String {
        TopicTemplate.substitute(mqtt.clientID, device: device.id)
    }

    /// `topics.root` with `{device}` replaced by `device.id`; every topic of the agent is under it.
    package var resolvedTopicRoot: String {
        TopicTemplate.substitute(topics.root, device: device.id)
    }

    /// See `AgentSettings.resolvedStateDirectory(systemDirectory:fallbackDirectory:)`.
    package func resolvedStateDirectory() throws(ConfigurationError) -> String {
        try agent.resolvedStateDirectory()
    }
}

extension AgentSettings {
    /// Where the agent keeps state that outlives it, created if missing: `agent.state_dir` when set (an
    /// error if it cannot be created or written), else `systemDirectory` when it can be created and
    /// written (a system service), else `fallbackDirectory` (a user running from a checkout). Returns an
    /// absolute path.
    package func resolvedStateDirectory(
        systemDirectory: String = "/var/lib/motion-agent",
        fallbackDirectory: String = "./.motion-agent"
    ) throws(ConfigurationError) -> String {
        if let stateDir {
            if let problem = Self.prepareDirectory(stateDir) {
                throw ConfigurationError(
                    kind: .fileUnavailable,
                    keyPath: "agent.state_dir",
                    value: stateDir,
                    problem: problem,
                    allowed: "a directory the agent can create and write; leave empty for the default"
                )
            }
            return Self.absolute(stateDir)
        }
        if Self.prepareDirectory(systemDirectory) == nil { return Self.absolute(systemDirectory) }
        if let problem = Self.prepareDirectory(fallbackDirectory) {
            throw ConfigurationError(
                kind: .fileUnavailable,
                keyPath: "agent.state_dir",
                value: nil,
                problem: "is not set, \(systemDirectory) is not writable and \(fallbackDirectory) \(problem)",
                allowed: "a directory the agent can create and write"
            )
        }
        return Self.absolute(fallbackDirectory)
    }

    /// Creates `path` (and its parents) when missing, then checks that it is a writable directory; returns
    /// the problem, if any.
    private static func prepareDirectory(_ path: String) -> String? {
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) {
            if !isDirectory.boolValue { return "is a file, not a directory" }
        } else {
            do {
                try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
            } catch {
                return "cannot be created: \(error.localizedDescription)"
            }
        }
        guard FileManager.default.isWritableFile(atPath: path) else { return "is not writable" }
        return nil
    }

    private static func absolute(_ path: String) -> String {
        URL(fileURLWithPath: path).standardizedFileURL.path
    }
}

extension MQTTSettings {
    /// The password: the first line of `mqtt.password_file` without its line break, or `nil` when no
    /// password file is set; refused when others may read or change the file. The loader already read it once,
    /// so this fails only if the file changed since.
    package func readPassword() throws(ConfigurationError) -> String? {
        guard let passwordFile else { return nil }
        switch FileAccess.password(at: passwordFile) {
        case .success(let password): return password
        case .failure(let problem):
            throw ConfigurationError(
                kind: problem.kind,
                keyPath: "mqtt.password_file",
                value: passwordFile,
                problem: problem.problem,
                allowed: ConfigurationSchema.passwordFileAllowed
            )
        }
    }
}

extension SparkplugSettings {
    /// The Sparkplug account's password: the first line of `sparkplug.password_file`, or `nil` when none is set
    /// (the native connection's password is used).
    package func readPassword() throws(ConfigurationError) -> String? {
        guard let passwordFile else { return nil }
        switch FileAccess.firstLine(of: passwordFile) {
        case .success(let password): return password
        case .failure(let problem):
            throw ConfigurationError(
                kind: problem.kind,
                keyPath: "sparkplug.password_file",
                value: passwordFile,
                problem: problem.problem,
                allowed: "the path of a readable file whose first line is the password"
            )
        }
    }
}

extension ControlSettings {
    /// The operators' public keys of `control.trusted_keys_file`; `nil` when none is set (commands and desired
    /// documents are not signed). The loader already read it once, so this fails only if the file changed since.
    package func readTrustedKeys() throws(ConfigurationError) -> TrustedKeyFile? {
        guard let trustedKeysFile else { return nil }
        switch FileAccess.trustedKeys(at: trustedKeysFile) {
        case .success(let keys): return keys
        case .failure(let problem):
            throw ConfigurationError(
                kind: problem.kind,
                keyPath: "control.trusted_keys_file",
                value: trustedKeysFile,
                problem: problem.problem,
                allowed: ConfigurationSchema.trustedKeysAllowed
            )
        }
    }
}
