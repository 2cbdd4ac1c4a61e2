import Foundation
import Testing

@testable import FleetConsole

/// The console's own HTTP request parser and WebSocket codec: what they accept, what they refuse, and their bounds.
struct ConsoleHTTPTests {
    static func parse(_ text: String) -> ConsoleHTTPRequest.Parse { ConsoleHTTPRequest.parse(Array(text.utf8)) }

    @Test func parsesARequestWithItsQueryHeadersAndBody() throws {
        let text =
            "POST /api/desired?x=a%20b&token=t+1 HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nCookie: a=1\r\nCookie: b=2\r\n"
            + "Content-Type: application/json\r\nContent-Length: 2\r\n\r\n{}extra"
        guard case .request(let request, let consumed) = Self.parse(text) else {
            Issue.record("not parsed: \(Self.parse(text))")
            return
        }
        #expect(request.method == "POST")
        #expect(request.path == "/api/desired")
        #expect(request.queryValue("x") == "a b")
        #expect(request.queryValue("token") == "t 1")
        #expect(request.header("HOST") == "127.0.0.1:8080")
        #expect(request.header("cookie") == "a=1; b=2")
        #expect(request.body == Array("{}".utf8))
        #expect(consumed == text.utf8.count - "extra".utf8.count)
    }

    @Test func waitsForTheWholeRequest() {
        #expect(Self.parse("GET / HTTP/1.1\r\nHost: a\r\n") == .incomplete)
        #expect(Self.parse("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nabc") == .incomplete)
    }

    @Test(arguments: [
        ("GET / HTTP/2\r\n\r\n", 400),
        ("get / HTTP/1.1\r\n\r\n", 400),
        ("GET http://x/ HTTP/1.1\r\n\r\n", 400),
        ("GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", 400),
        ("POST / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 1\r\n\r\nx", 400),
        ("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n", 501),
        ("POST / HTTP/1.1\r\nContent-Length: 99999\r\n\r\n", 413),
        ("POST / HTTP/1.1\r\nContent-Length: -1\r\n\r\n", 400),
        ("GET / HTTP/1.1\r\nBad Name: x\r\n\r\n", 400),
        ("GET / HTTP/1.1\r\nX: \u{1B}[2J\r\n\r\n", 400),
        ("GET /%ff HTTP/1.1\r\n\r\n", 400),
        ("GET /?a=%zz HTTP/1.1\r\n\r\n", 400),
    ])
    func refuses(_ text: String, _ status: Int) {
        guard case .invalid(let got, let reason) = Self.parse(text) else {
            Issue.record("accepted: \(text.debugDescription)")
            return
        }
        #expect(got == status)
        #expect(!reason.isEmpty)
    }

    @Test func boundsTheHead() {
        let long = "GET / HTTP/1.1\r\nX: " + String(repeating: "a", count: ConsoleHTTPRequest.maximumHead) + "\r\n"
        guard case .invalid(431, _) = Self.parse(long) else {
            Issue.record("an endless head was not refused")
            return
        }
        let many =
            "GET / HTTP/1.1\r\n" + (0...ConsoleHTTPRequest.maximumHeaders).map { "H\($0): x\r\n" }.joined() + "\r\n"
        guard case .invalid(431, _) = Self.parse(many) else {
            Issue.record("too many headers were not refused")
            return
        }
    }

    /// RFC 6455's own example key and answer.
    @Test func answersTheHandshake() {
        #expect(WebSocketCodec.accept(key: "dGhlIHNhbXBsZSBub25jZQ==") == "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")
        #expect(WebSocketCodec.accept(key: "short") == nil)
    }

    static func masked(_ opcode: UInt8, _ payload: [UInt8], fin: Bool = true) -> [UInt8] {
        let mask: [UInt8] = [1, 2, 3, 4]
        var out: [UInt8] = [(fin ? 0x80 : 0) | opcode]
        if payload.count < 126 {
            out.append(0x80 | UInt8(payload.count))
        } else {
            out += [0x80 | 126, UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)]
        }
        out += mask
        out += payload.enumerated().map { $0.element ^ mask[$0.offset & 3] }
        return out
    }

    @Test func readsMaskedMessagesJoinsFragmentsAndAnswersPingsBetweenThem() {
        var reader = WebSocketCodec.Reader()
        reader.append(Self.masked(1, Array("{\"wat".utf8), fin: false))
        #expect(reader.next() == .none)
        reader.append(Self.masked(9, [7]))
        reader.append(Self.masked(0, Array("ch\":1}".utf8)))
        #expect(reader.next() == .message(.ping, [7]))
        #expect(reader.next() == .message(.text, Array("{\"watch\":1}".utf8)))
        #expect(reader.next() == .none)
        let long = [UInt8](repeating: 65, count: 300)
        let frame = Self.masked(1, long)
        reader.append(Array(frame.prefix(100)))
        #expect(reader.next() == .none)
        reader.append(Array(frame.dropFirst(100)))
        #expect(reader.next() == .message(.text, long))
    }

    @Test(
        arguments: [
            [0x81, 0x05, 0x68, 0x65, 0x6C, 0x6C, 0x6F],  // not masked
            [0xC1, 0x80, 0, 0, 0, 0],  // a reserved bit
            [0x83, 0x80, 0, 0, 0, 0],  // opcode 3
            [0x09, 0x80, 0, 0, 0, 0],  // a fragmented ping
            [0x80, 0x80, 0, 0, 0, 0],  // a continuation of nothing
            [0x81, 0xFF, 0, 0, 0, 0, 0xFF, 0xFF, 0xFF, 0xFF],  // 4 GiB
        ] as [[UInt8]]
    )
    func refusesBadFrames(_ bytes: [UInt8]) {
        var reader = WebSocketCodec.Reader()
        reader.append(bytes)
        guard case .invalid(let code, _) = reader.next() else {
            Issue.record("accepted \(bytes)")
            return
        }
        #expect(code == 1002 || code == 1009)
    }

    @Test func encodesUnmaskedFramesOfEveryLength() {
        #expect(WebSocketCodec.encode(.text, Array("hi".utf8)) == [0x81, 2, 104, 105])
        #expect(WebSocketCodec.encode(.text, [UInt8](repeating: 0, count: 200)).prefix(4) == [0x81, 126, 0, 200])
        let big = WebSocketCodec.encode(.text, [UInt8](repeating: 0, count: 70_000))
        #expect(big.prefix(10) == [0x81, 127, 0, 0, 0, 0, 0, 1, 0x11, 0x70])
        #expect(big.count == 70_010)
    }
}
