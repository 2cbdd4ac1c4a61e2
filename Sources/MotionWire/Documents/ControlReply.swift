import Foundation

/// The one answer to a command, as sent on the reply topic and as `motion-agent ctl` reads it
/// (docs/schemas/control-reply.schema.json). Keys are written sorted, `id` is null when it could not be read.
public struct ControlReply: Sendable, Equatable, Codable {
    public var code: Int
    public var device: String
    public var id: String?
    public var message: String
    public var ok: Bool
    public var result: ControlResult?

    /// Where `decode(_:shape:)` leaves the result shape to expect (`ControlResult.Shape`).
    public static let shapeKey = CodingUserInfoKey(rawValue: "motion-agent.control.result-shape")!

    public static func applied(id: String, device: String, result: ControlResult) -> ControlReply {
        ControlReply(code: 200, device: device, id: id, message: "ok", ok: true, result: result)
    }

    public static func refused(_ failure: ControlFailure, device: String) -> ControlReply {
        ControlReply(
            code: code(for: failure.kind),
            device: device,
            id: failure.id,
            message: failure.message,
            ok: false,
            result: nil
        )
    }

    /// The wire code of each kind of refusal: the only place codes are chosen. Oversized commands stay 400
    /// (not 413), as the reply schema and existing clients expect.
    public static func code(for kind: ControlFailure.Kind) -> Int {
        switch kind {
        case .malformed, .tooLarge: 400
        case .unauthorized: 401
        case .unknown: 404
        case .conflict, .expired: 409
        case .rateLimited: 429
        case .internalFailure: 500
        }
    }

    public init(code: Int, device: String, id: String?, message: String, ok: Bool, result: ControlResult?) {
        self.code = code
        self.device = device
        self.id = id
        self.message = message
        self.ok = ok
        self.result = result
    }

    private enum CodingKeys: String, CodingKey { case code, device, id, message, ok, result }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        code = try c.decode(Int.self, forKey: .code)
        device = try c.decode(String.self, forKey: .device)
        id = try c.decodeIfPresent(String.self, forKey: .id)
        message = try c.decode(String.self, forKey: .message)
        ok = try c.decode(Bool.self, forKey: .ok)
        result = try c.decodeIfPresent(ControlResult.self, forKey: .result)
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(code, forKey: .code)
        try c.encode(device, forKey: .device)
        // Always present, null when unknown: clients match replies by id.
        try c.encode(id, forKey: .id)
        try c.encode(message, forKey: .message)
        try c.encode(ok, forKey: .ok)
        try c.encodeIfPresent(result, forKey: .result)
    }

    /// The reply's bytes with sorted keys (the same bytes JSONSerialization wrote before replies were typed).
    /// Written straight into a buffer: every command is answered, and Foundation's `JSONEncoder` was most of the
    /// cost of a reply; results other than a ping, a pedometer reset or a status still go through it.
    public func encoded() -> [UInt8] {
        var out = JSONBuffer(capacity: 256)
        out.raw(#"{"code":"#)
        out.integer(code)
        out.raw(#","device":"#)
        out.string(device, escapingSlashes: true)
        out.raw(#","id":"#)
        if let id { out.string(id, escapingSlashes: true) } else { out.raw("null") }
        out.raw(#","message":"#)
        out.string(message, escapingSlashes: true)
        out.raw(#","ok":"#)
        out.bool(ok)
        if let result {
            out.raw(#","result":"#)
            do {
                try Self.write(result, into: &out)
            } catch {
                return Array(#"{"ok":false}"#.utf8)
            }
        }
        out.byte(UInt8(ascii: "}"))
        return out.bytes
    }

    private static func write(_ result: ControlResult, into out: inout JSONBuffer) throws {
        switch result {
        case .ping(let ping):
            out.raw(#"{"time":"#)
            try StatusJSON.number(ping.time, "time", &out)
            out.byte(UInt8(ascii: "}"))
        case .pedometerReset(let reset):
            out.raw(#"{"numberOfSteps":"#)
            out.integer(reset.numberOfSteps)
            out.byte(UInt8(ascii: "}"))
        default:
            let bytes = try encoder.encode(result)
            bytes.withUnsafeBytes { out.append($0) }
        }
    }

    /// Reads a reply whose result, if any, has `shape`: the shape of the command it answers (each command's
    /// descriptor names it).
    public static func decode(_ payload: [UInt8], shape: ControlResult.Shape) throws -> ControlReply {
        let decoder = JSONDecoder()
        decoder.userInfo[shapeKey] = shape
        return try decoder.decode(ControlReply.self, from: Data(payload))
    }

    static var encoder: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return encoder
    }
}
