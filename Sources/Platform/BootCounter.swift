import AgentPorts
import Foundation

/// The number of times the agent has started with this state directory, kept in `boot-count` (decimal text).
package enum BootCounter {
    /// The largest count the agent keeps: beyond 2⁵³ a JSON consumer (JavaScript's numbers) could no longer tell
    /// two counts apart, and no device starts that often — a larger value was written by something else.
    package static let maximum: UInt64 = 1 << 53

    /// Reads, increments and writes back the counter. A missing, unreadable or implausible file (above
    /// `maximum`) starts over from 0; a state directory that cannot be written is an error that names the
    /// directory and the fix.
    package static func increment(in state: any StateDirectory) throws -> UInt64 {
        let kept = (try? state.read(.bootCount)).flatMap { $0 }
            .flatMap { UInt64(String(decoding: $0, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)) }
        let previous = kept.map { $0 < maximum ? $0 : 0 } ?? 0
        let next = previous + 1
        do {
            try state.replace(.bootCount, with: Array("\(next)\n".utf8))
        } catch {
            throw AgentError("\(error) — make agent.state_dir writable for the agent's user")
        }
        return next
    }
}
