import AgentPorts
import Foundation

/// The number of times the agent has started with this state directory, persisted in `boot-count`.
public enum BootCounter {
    /// Reads, increments and writes back the counter. A missing or unreadable file starts from 0; a state
    /// directory that cannot be written is an error that names the directory and the fix.
    public static func increment(in directory: String) throws -> UInt64 {
        let fm = FileManager.default
        do {
            try fm.createDirectory(atPath: directory, withIntermediateDirectories: true)
        } catch {
            throw AgentError(
                "cannot create the state directory \(directory): \(error.localizedDescription) — set agent.state_dir in config.yaml to a writable directory"
            )
        }
        let path = directory + "/boot-count"
        let previous =
            (try? String(contentsOfFile: path, encoding: .utf8))
            .flatMap { UInt64($0.trimmingCharacters(in: .whitespacesAndNewlines)) } ?? 0
        let next = previous + 1
        let tmp = path + ".tmp"
        do {
            try "\(next)\n".write(toFile: tmp, atomically: false, encoding: .utf8)
            // rename(2) replaces atomically: a crash leaves the old count or the new one, never neither.
            guard rename(tmp, path) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        } catch {
            throw AgentError(
                "cannot write \(path): \(error.localizedDescription) — make agent.state_dir writable for the agent's user"
            )
        }
        return next
    }
}
