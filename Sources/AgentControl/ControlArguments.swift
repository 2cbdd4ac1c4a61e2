import AgentConfig
import AgentPipeline
import AgentPorts
import Foundation
import MotionWire

/// The arguments of a command, read with their types checked; remembers which keys were read so unknown keys
/// can be refused.
struct Arguments {
    private let members: [String: StrictJSON.Value]
    /// Envelope keys every command may carry; `counter` and `target` guard signed commands against replay and
    /// redirection (`CommandSignature`).
    private var used: Set<String> = ["id", "command", "timestamp", "counter", "target"]

    init(_ members: [(key: String, value: StrictJSON.Value)]) {
        // Keys are unique: the strict parser refuses a repeated one.
        self.members = Dictionary(members.map { ($0.key, $0.value) }, uniquingKeysWith: { first, _ in first })
    }

    var unusedKeys: [String] { members.keys.filter { !used.contains($0) }.sorted() }

    mutating func string(_ key: String) -> Result<String?, ControlFailure> {
        used.insert(key)
        guard let v = members[key], v != .null else { return .success(nil) }
        guard case .string(let s) = v else {
            return .failure(ControlFailure(.malformed, "\"\(key)\" must be a string"))
        }
        return .success(s)
    }

    mutating func number(_ key: String) -> Result<Double?, ControlFailure> {
        used.insert(key)
        guard let v = members[key], v != .null else { return .success(nil) }
        guard case .number = v else {
            return .failure(ControlFailure(.malformed, "\"\(key)\" must be a number"))
        }
        guard let d = v.double else {
            return .failure(ControlFailure(.malformed, "\"\(key)\" must be a finite number"))
        }
        return .success(d)
    }

    mutating func bool(_ key: String) -> Result<Bool?, ControlFailure> {
        used.insert(key)
        guard let v = members[key], v != .null else { return .success(nil) }
        guard case .bool(let b) = v else {
            return .failure(ControlFailure(.malformed, "\"\(key)\" must be true or false"))
        }
        return .success(b)
    }
}

extension Arguments {
    /// The `stream` argument of command `name`: missing is malformed, an unknown name is unknown.
    mutating func stream(for name: String) -> Result<StreamName, ControlFailure> {
        let streams = StreamName.allCases.map(\.rawValue).joined(separator: ", ")
        switch string("stream") {
        case .failure(let f): return .failure(f)
        case .success(nil): return .failure(ControlFailure(.malformed, "\(name) needs \"stream\" — one of \(streams)"))
        case .success(let s?):
            guard let stream = StreamName(rawValue: s) else {
                return .failure(ControlFailure(.unknown, "unknown stream \"\(s)\" — streams: \(streams)"))
            }
            return .success(stream)
        }
    }

    /// A time argument: Unix seconds, or an ISO 8601 date-time string.
    mutating func time(_ key: String) -> Result<Double, ControlFailure> {
        let help = "\"\(key)\" must be a time: ISO 8601 (2026-11-21T08:00:00Z) or Unix seconds"
        if case .success(let n?) = number(key) { return .success(n) }
        switch string(key) {
        case .success(let text?):
            if let seconds = InternetDateTime.unixSeconds(text) { return .success(seconds) }
            return .failure(ControlFailure(.malformed, "\(help), not \"\(text)\""))
        case .success(nil): return .failure(ControlFailure(.malformed, "\(help); it is missing"))
        case .failure: return .failure(ControlFailure(.malformed, help))
        }
    }
}
