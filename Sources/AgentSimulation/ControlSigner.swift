import AgentConfig
import AgentControl
import MotionWire
import Synchronization

/// An operator's signing as `motion-agent ctl --signing-key` and `motion-agent fleet set --signing-key` do it, on
/// the simulation's clock: command envelopes for one target topic with a rising counter (at least the
/// microseconds since 1970 on the world's real-time clock, so it lies above every device's floor, and one above
/// the last when that is higher) and a timestamp; desired documents for a topic and layer. With another key —
/// one no device trusts, or another private key under a trusted key's id — it makes the forgeries an attacker
/// would.
package final class ControlSigner: Sendable {
    package let key: OperatorSigningKey
    private let clock: VirtualClock
    private let last = Mutex(0)

    package init(key: OperatorSigningKey, clock: VirtualClock) {
        self.key = key
        self.clock = clock
    }

    /// The next counter: rising, and at least the microseconds since 1970 now.
    package func nextCounter() -> Int {
        let now = Int(clock.realtimeSeconds() * 1e6)
        return last.withLock { last in
            last = max(last + 1, now)
            return last
        }
    }

    /// `{"id": id, "command": name, …arguments}`'s members.
    package static func command(
        _ id: String,
        _ name: String,
        _ arguments: [(String, StrictJSON.Value)] = []
    ) -> [(key: String, value: StrictJSON.Value)] {
        [("id", .string(id)), ("command", .string(name))] + arguments.map { (key: $0.0, value: $0.1) }
    }

    /// The envelope of `command` signed for `target`, with `counter` (default: the next one) and the current
    /// real time as its timestamp, as the operators' ctl makes it.
    package func signed(
        _ command: [(key: String, value: StrictJSON.Value)],
        target: String,
        counter: Int? = nil,
        timestamp: Bool = true
    ) -> [UInt8] {
        var members: [(key: String, value: StrictJSON.Value)] = [
            ("target", .string(target)), ("counter", .number(String(counter ?? nextCounter()))),
        ]
        members += command
        if timestamp { members.append(("timestamp", .number(String(clock.realtimeSeconds())))) }
        return SignedEnvelope.seal(members, with: key)
    }

    /// The envelope of the desired document `json` (a JSON object: `version`, then settings or `clear`) for
    /// `layer` on `topic`, as `fleet set --signing-key` publishes it. nil when `json` is not a JSON object.
    package func document(_ json: String, layer: ConfigurationLayer, topic: String) -> [UInt8]? {
        guard case .object(let members)? = try? StrictJSON.parse(Array(json.utf8), limits: .desiredDocument) else {
            return nil
        }
        return SignedEnvelope.seal(
            [("target", .string(topic)), ("layer", .string("\(layer)"))] + members,
            with: key
        )
    }

    /// The signed object inside `envelope` (its members in order), unverified: what anyone who reads the topic
    /// can see.
    package static func signedObject(_ envelope: [UInt8]) -> [(key: String, value: StrictJSON.Value)]? {
        guard let outer = try? StrictJSON.parse(envelope, limits: .document),
            let signed = outer["signed"]?.string.flatMap(Base64.decode),
            case .object(let members)? = try? StrictJSON.parse(signed, limits: .document)
        else { return nil }
        return members
    }
}
