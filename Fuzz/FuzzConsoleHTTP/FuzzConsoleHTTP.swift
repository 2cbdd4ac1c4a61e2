import CFuzzerDriver
import FleetConsole

// The console's parsers of bytes from the network (`motion-agent console`): the HTTP request parser and the
// WebSocket frame reader. Byte 0 chooses which; the rest is what a peer sent, handed over in two reads split at
// byte 1's position, as a socket would.
//
// Checked: the request parser answers the same for the bytes at once and in two parts (a request is never
// judged by where a read ended); a request keeps within the bounds (head, headers, body), and its consumed count
// is within the bytes; the frame reader ends (every step consumes or stops), never yields a message over its
// maximum, and a control message is at most 125 bytes.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzConsoleHTTP(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    guard count > 1 else { return 0 }
    let raw = UnsafeRawBufferPointer(start: start, count: count)
    let bytes = Array(raw[2...])
    let split = min(bytes.count, Int(raw[1]))
    if raw[0] & 1 == 0 {
        let whole = ConsoleHTTPRequest.parse(bytes)
        let first = ConsoleHTTPRequest.parse(Array(bytes[..<split]))
        if case .request(let request, let consumed) = whole {
            precondition(consumed <= bytes.count, "consumed \(consumed) of \(bytes.count) bytes")
            precondition(request.body.count <= ConsoleHTTPRequest.maximumBody, "a body over the bound")
            precondition(request.headers.count <= ConsoleHTTPRequest.maximumHeaders, "headers over the bound")
            // The first part alone is either the same request (all of it was there) or not yet a request.
            if case .request(let early, let used) = first {
                precondition(early == request && used == consumed, "a request judged by where a read ended")
            }
        }
        if case .invalid(let status, _) = first, case .request = whole {
            // A prefix may be refused only for what the whole shows too (nothing: the whole was accepted).
            fatalError("the first \(split) bytes were refused (\(status)) but the whole request was accepted")
        }
    } else {
        var reader = WebSocketCodec.Reader()
        reader.append(Array(bytes[..<split]))
        var steps = 0
        for part in [Array(bytes[split...]), []] {
            reader.append(part)
            loop: while true {
                steps += 1
                precondition(steps < 100_000, "the reader does not end")
                switch reader.next() {
                case .none, .invalid: break loop
                case .message(let opcode, let payload):
                    precondition(payload.count <= WebSocketCodec.maximumMessage, "a message over the bound")
                    if opcode.rawValue >= 8 { precondition(payload.count <= 125, "a control frame over 125 bytes") }
                }
            }
        }
    }
    return 0
}

/// The entry point SwiftPM links as `main` (`<module>_main`): libFuzzer's driver, with the arguments libFuzzer
/// documents (`-max_total_time=`, corpus directories, …).
@_cdecl("FuzzConsoleHTTP_main")
public func fuzzerMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> CInt {
    var argc = argc
    var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = argv
    return LLVMFuzzerRunDriver(&argc, &argv) { data, size in
        fuzzConsoleHTTP(UnsafeRawPointer(data) ?? UnsafeRawPointer(bitPattern: 1)!, size)
    }
}
