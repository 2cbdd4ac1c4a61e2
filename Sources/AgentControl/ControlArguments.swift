import AgentConfig
import AgentPipeline
import AgentPorts
import Foundation
import MotionWire

/// The arguments of a command, read with their types checked; remembers which keys were read so unknown keys
/// can be refused.
struct Arguments {
    private let object: [String: Any]
    /// Envelope keys every command may carry; `nonce` guards signed commands against replay (`NonceLedger`).
    private var used: Set<String> = ["id", "command", "timestamp", "nonce"]

    init(_ object: [String: Any]) {
        self.object = object
    }

    var unusedKeys: [String] { object.keys.filter { !used.contains($0) }.sorted() }

    mutating func string(_ key: String) -> Result<String?, ControlFailure> {
        used.insert(key)
        guard let v = object[key], !(v is NSNull) else { return .success(nil) }
        guard let s = v as? String else {
            return .failure(ControlFailure(.malformed, "\"\(key)\" must be a string"))
        }
        return .success(s)
    }

    mutating func number(_ key: String) -> Result<Double?, ControlFailure> {
        used.insert(key)
        guard let v = object[key], !(v is NSNull) else { return .success(nil) }
        // JSONSerialization gives booleans as NSNumber too: refuse them as numbers.
        guard let n = v as? NSNumber, !n.isJSONBoolean else {
            return .failure(ControlFailure(.malformed, "\"\(key)\" must be a number"))
        }
        let d = n.doubleValue
        guard d.isFinite else {
            return .failure(ControlFailure(.malformed, "\"\(key)\" must be a finite number"))
        }
        return .success(d)
    }

    mutating func bool(_ key: String) -> Result<Bool?, ControlFailure> {
        used.insert(key)
        guard let v = object[key], !(v is NSNull) else { return .success(nil) }
        guard let n = v as? NSNumber, n.isJSONBoolean else {
            return .failure(ControlFailure(.malformed, "\"\(key)\" must be true or false"))
        }
        return .success(n.boolValue)
    }
}

extension NSNumber {
    /// JSONSerialization gives `true`/`false` as NSNumbers of type char ("c"); JSON numbers are never chars.
    fileprivate var isJSONBoolean: Bool { String(cString: objCType) == "c" }
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
