import AgentConfig
import AgentPipeline
import AgentPorts
import Foundation
import MotionWire

/// A parsed command: `{"id": "…", "command": "…", …arguments}`. Parsing checks only the envelope and the
/// argument types; whether the command can be carried out is the control plane's decision.
package struct ControlRequest: Sendable, Equatable {
    package var id: String
    /// The command's name, which picks its `ControlCommandDescriptor`.
    package var name: String
    package var command: ControlCommand
    /// Unix seconds the operator stamped the command with, if any; old commands are refused.
    package var issuedAt: Double?

    /// The default largest command, bytes. A command is a few hundred bytes; anything bigger is a mistake or
    /// an attack, and parsing it would cost the device memory.
    package static let maximumSize = 8192

    /// Parses a payload, or says precisely what is wrong with it (malformed, too large, or unknown).
    package static func parse(
        _ payload: [UInt8],
        maximumSize: Int = maximumSize
    ) -> Result<ControlRequest, ControlFailure> {
        guard payload.count <= maximumSize else {
            return .failure(
                ControlFailure(
                    .tooLarge,
                    "the command is \(payload.count) bytes; at most \(maximumSize) are accepted"
                )
            )
        }
        guard String(validating: payload, as: UTF8.self) != nil else {
            return .failure(
                ControlFailure(
                    .malformed,
                    "the command is not valid UTF-8 — send a JSON object encoded as UTF-8"
                )
            )
        }
        let members: [(key: String, value: StrictJSON.Value)]
        do {
            guard case .object(let o) = try StrictJSON.parse(payload, limits: .command) else {
                return .failure(
                    ControlFailure(
                        .malformed,
                        "the command must be a JSON object like {\"id\": \"1\", \"command\": \"status\"}"
                    )
                )
            }
            members = o
        } catch {
            return .failure(
                ControlFailure(
                    .malformed,
                    "the command is not valid JSON: it \(error) — send an object like {\"id\": \"1\", \"command\": \"status\"}"
                )
            )
        }
        return parse(members: members)
    }

    /// Reads a command object's members (a plain command's, or a signed one's once opened).
    package static func parse(
        members: [(key: String, value: StrictJSON.Value)]
    ) -> Result<ControlRequest, ControlFailure> {
        var args = Arguments(members)
        let id: String
        switch args.string("id") {
        case .success(let v?) where !v.isEmpty && v.utf8.count <= 128: id = v
        case .success:
            return .failure(
                ControlFailure(
                    .malformed,
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
                    .malformed,
                    id: id,
                    "\"command\" is required — one of \(ControlCommandDescriptor.names.joined(separator: ", "))"
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
        guard let descriptor = ControlCommandDescriptor.named(name) else {
            return .failure(
                ControlFailure(
                    .unknown,
                    id: id,
                    "unknown command \"\(name)\" — commands: \(ControlCommandDescriptor.names.joined(separator: ", "))"
                )
            )
        }
        switch descriptor.parse(&args) {
        case .success(let command):
            if let unknown = args.unusedKeys.first {
                return .failure(
                    ControlFailure(
                        .malformed,
                        id: id,
                        "\"\(unknown)\" is not an argument of \(name) — accepted: \(descriptor.arguments)"
                    )
                )
            }
            return .success(ControlRequest(id: id, name: name, command: command, issuedAt: issuedAt))
        case .failure(var f):
            f.id = id
            return .failure(f)
        }
    }
}
