import Crypto
import Foundation

/// The WebSocket protocol (RFC 6455) as far as the console uses it: the opening handshake's answer, the frames a
/// browser sends (masked, at most `maximumMessage` bytes a message) and the frames the console sends (text, pong,
/// close; unmasked). Pure and bounded, like the HTTP parser, and fuzzed with it (Fuzz/FuzzConsoleHTTP).
package struct WebSocketCodec: Sendable {
    package enum Opcode: UInt8, Sendable {
        case continuation = 0
        case text = 1
        case binary = 2
        case close = 8
        case ping = 9
        case pong = 10
    }

    /// One frame.
    package struct Frame: Sendable, Equatable {
        package var fin: Bool
        package var opcode: Opcode
        package var payload: [UInt8]
    }

    /// What the bytes so far make.
    package enum Decoded: Sendable, Equatable {
        case incomplete
        case frame(Frame, consumed: Int)
        /// A frame after which the connection closes, with the close code to send (1002 protocol error, 1009 too
        /// big).
        case invalid(code: UInt16, reason: String)
    }

    /// A message from a page is at most this many bytes (`{"watch": "<device id>"}`).
    package static let maximumMessage = 64 << 10

    /// The `Sec-WebSocket-Accept` value for a request's `Sec-WebSocket-Key`, or nil when the key is not 16 bytes
    /// of base64.
    package static func accept(key: String) -> String? {
        guard let decoded = Data(base64Encoded: key), decoded.count == 16 else { return nil }
        let digest = Insecure.SHA1.hash(data: Data((key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11").utf8))
        return Data(digest).base64EncodedString()
    }

    /// The frame at the start of `bytes`.
    package static func decode(_ bytes: ArraySlice<UInt8>) -> Decoded {
        let base = bytes.startIndex
        guard bytes.count >= 2 else { return .incomplete }
        let first = bytes[base]
        let second = bytes[base + 1]
        guard first & 0x70 == 0 else { return .invalid(code: 1002, reason: "reserved bits set") }
        guard let opcode = Opcode(rawValue: first & 0x0F) else { return .invalid(code: 1002, reason: "unknown opcode") }
        guard second & 0x80 != 0 else { return .invalid(code: 1002, reason: "a client frame must be masked") }
        let fin = first & 0x80 != 0
        var length = UInt64(second & 0x7F)
        var position = 2
        if length == 126 {
            guard bytes.count >= 4 else { return .incomplete }
            length = UInt64(bytes[base + 2]) << 8 | UInt64(bytes[base + 3])
            position = 4
        } else if length == 127 {
            guard bytes.count >= 10 else { return .incomplete }
            length = 0
            for index in 0..<8 { length = length << 8 | UInt64(bytes[base + 2 + index]) }
            position = 10
        }
        if opcode.rawValue >= 8, !fin || length > 125 {
            return .invalid(code: 1002, reason: "a control frame is one frame of at most 125 bytes")
        }
        guard length <= UInt64(maximumMessage) else {
            return .invalid(code: 1009, reason: "a message is at most \(maximumMessage) bytes")
        }
        let count = Int(length)
        guard bytes.count >= position + 4 + count else { return .incomplete }
        let mask = bytes[(base + position)..<(base + position + 4)].map { $0 }
        position += 4
        var payload = Array(bytes[(base + position)..<(base + position + count)])
        for index in payload.indices { payload[index] ^= mask[index & 3] }
        return .frame(Frame(fin: fin, opcode: opcode, payload: payload), consumed: position + count)
    }

    /// Frames → messages: what a connection has read and not yet used, and a fragmented message in progress.
    package struct Reader: Sendable {
        private var buffer: [UInt8] = []
        private var fragments: (opcode: Opcode, payload: [UInt8])?

        package init() {}

        package mutating func append(_ bytes: [UInt8]) { buffer += bytes }

        package enum Event: Sendable, Equatable {
            /// Read more.
            case none
            /// A whole text or binary message (fragments joined), or a control frame (close, ping, pong).
            case message(Opcode, [UInt8])
            case invalid(code: UInt16, reason: String)
        }

        package mutating func next() -> Event {
            while true {
                switch WebSocketCodec.decode(buffer[...]) {
                case .incomplete: return .none
                case .invalid(let code, let reason): return .invalid(code: code, reason: reason)
                case .frame(let frame, let consumed):
                    buffer.removeFirst(consumed)
                    if frame.opcode.rawValue >= 8 { return .message(frame.opcode, frame.payload) }
                    if var started = fragments {
                        guard frame.opcode == .continuation else {
                            return .invalid(code: 1002, reason: "a new message began before the last one ended")
                        }
                        guard started.payload.count + frame.payload.count <= WebSocketCodec.maximumMessage else {
                            return .invalid(
                                code: 1009,
                                reason: "a message is at most \(WebSocketCodec.maximumMessage) bytes"
                            )
                        }
                        started.payload += frame.payload
                        fragments = frame.fin ? nil : started
                        if frame.fin { return .message(started.opcode, started.payload) }
                    } else {
                        guard frame.opcode != .continuation else {
                            return .invalid(code: 1002, reason: "a continuation of no message")
                        }
                        if frame.fin { return .message(frame.opcode, frame.payload) }
                        fragments = (frame.opcode, frame.payload)
                    }
                }
            }
        }
    }

    /// A frame from the console: FIN, unmasked.
    package static func encode(_ opcode: Opcode, _ payload: [UInt8]) -> [UInt8] {
        var out: [UInt8] = [0x80 | opcode.rawValue]
        out.reserveCapacity(payload.count + 10)
        if payload.count < 126 {
            out.append(UInt8(payload.count))
        } else if payload.count <= 0xFFFF {
            out += [126, UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)]
        } else {
            out.append(127)
            for shift in stride(from: 56, through: 0, by: -8) { out.append(UInt8((payload.count >> shift) & 0xFF)) }
        }
        return out + payload
    }
}
