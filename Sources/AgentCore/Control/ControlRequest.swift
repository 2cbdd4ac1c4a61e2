import AgentConfig
import AgentPorts
import Foundation

/// A parsed command: `{"id": "…", "command": "…", …arguments}`. Parsing checks only the envelope and the
/// argument types; whether the command can be carried out is the control plane's decision.
public struct ControlRequest: Sendable, Equatable {
    public var id: String
    public var command: ControlCommand
    /// Unix seconds the operator stamped the command with, if any; old commands are refused.
    public var issuedAt: Double?

    /// The default largest command, bytes. A command is a few hundred bytes; anything bigger is a mistake or
    /// an attack, and parsing it would cost the device memory.
    public static let maximumSize = 8192

    /// Parses a payload, or says precisely what is wrong with it (code 400 or 404).
    public static func parse(
        _ payload: [UInt8],
        maximumSize: Int = maximumSize
    ) -> Result<ControlRequest, ControlFailure> {
        guard payload.count <= maximumSize else {
            return .failure(
                ControlFailure(
                    code: 400,
                    id: nil,
                    "the command is \(payload.count) bytes; at most \(maximumSize) are accepted"
                )
            )
        }
        guard String(validating: payload, as: UTF8.self) != nil else {
            return .failure(
                ControlFailure(
                    code: 400,
                    id: nil,
                    "the command is not valid UTF-8 — send a JSON object encoded as UTF-8"
                )
            )
        }
        let object: [String: Any]
        do {
            guard
                let o = try JSONSerialization.jsonObject(with: Data(payload), options: [.fragmentsAllowed])
                    as? [String: Any]
            else {
                return .failure(
                    ControlFailure(
                        code: 400,
                        id: nil,
                        "the command must be a JSON object like {\"id\": \"1\", \"command\": \"status\"}"
                    )
                )
            }
            object = o
        } catch {
            return .failure(
                ControlFailure(
                    code: 400,
                    id: nil,
                    "the command is not valid JSON — send an object like {\"id\": \"1\", \"command\": \"status\"}"
                )
            )
        }
        var args = Arguments(object)
        let id: String
        switch args.string("id") {
        case .success(let v?) where !v.isEmpty && v.utf8.count <= 128: id = v
        case .success:
            return .failure(
                ControlFailure(
                    code: 400,
                    id: nil,
                    "\"id\" is required: a non-empty string of at most 128 bytes that names this command in the reply"
                )
            )
        case .failure(let f): return .failure(f)
        }
        let name: String
        switch args.string("command") {
        case .success(let v?): name = v
        case .success(nil):
            return .failure(
                ControlFailure(
                    code: 400,
                    id: id,
                    "\"command\" is required — one of \(ControlCommand.names.joined(separator: ", "))"
                )
            )
        case .failure(var f):
            f.id = id
            return .failure(f)
        }
        var issuedAt: Double?
        switch args.number("timestamp") {
        case .success(let v): issuedAt = v
        case .failure(var f):
            f.id = id
            return .failure(f)
        }
        switch ControlCommand.parse(name: name, arguments: &args) {
        case .success(let command):
            if let unknown = args.unusedKeys.first {
                return .failure(
                    ControlFailure(
                        code: 400,
                        id: id,
                        "\"\(unknown)\" is not an argument of \(name) — accepted: \(ControlCommand.argumentHelp(name))"
                    )
                )
            }
            return .success(ControlRequest(id: id, command: command, issuedAt: issuedAt))
        case .failure(var f):
            f.id = id
            return .failure(f)
        }
    }
}

/// Why a command was refused: an HTTP-like code and a sentence saying what was wrong and what is accepted.
public struct ControlFailure: Error, Sendable, Equatable {
    public var code: Int
    public var id: String?
    public var message: String

    public init(code: Int, id: String?, _ message: String) {
        self.code = code
        self.id = id
        self.message = message
    }
}

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
            return .failure(ControlFailure(code: 400, id: nil, "\"\(key)\" must be a string"))
        }
        return .success(s)
    }

    mutating func number(_ key: String) -> Result<Double?, ControlFailure> {
        used.insert(key)
        guard let v = object[key], !(v is NSNull) else { return .success(nil) }
        // JSONSerialization gives booleans as NSNumber too: refuse them as numbers.
        guard let n = v as? NSNumber, !n.isJSONBoolean else {
            return .failure(ControlFailure(code: 400, id: nil, "\"\(key)\" must be a number"))
        }
        let d = n.doubleValue
        guard d.isFinite else {
            return .failure(ControlFailure(code: 400, id: nil, "\"\(key)\" must be a finite number"))
        }
        return .success(d)
    }

    mutating func bool(_ key: String) -> Result<Bool?, ControlFailure> {
        used.insert(key)
        guard let v = object[key], !(v is NSNull) else { return .success(nil) }
        guard let n = v as? NSNumber, n.isJSONBoolean else {
            return .failure(ControlFailure(code: 400, id: nil, "\"\(key)\" must be true or false"))
        }
        return .success(n.boolValue)
    }
}

extension NSNumber {
    /// JSONSerialization gives `true`/`false` as NSNumbers of type char ("c"); JSON numbers are never chars.
    fileprivate var isJSONBoolean: Bool { String(cString: objCType) == "c" }
}
