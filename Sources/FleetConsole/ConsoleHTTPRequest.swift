/// One HTTP/1.1 request as the console reads it off its socket — bounded, strict and pure, so that every byte a
/// browser (or anyone on the network) sends goes through one parser that is unit-tested and fuzzed
/// (Fuzz/FuzzConsoleHTTP). The console needs little of HTTP: GET, HEAD and POST with a Content-Length body, no
/// chunked bodies, no pipelining (every answer closes its connection, but the WebSocket's).
package struct ConsoleHTTPRequest: Sendable, Equatable {
    package var method: String
    /// The path, percent-decoded (`/api/device`).
    package var path: String
    /// Query items, percent-decoded, in order.
    package var query: [(name: String, value: String)]
    /// Header names lowercased → value (trimmed).
    package var headers: [String: String]
    package var body: [UInt8]

    package static func == (a: Self, b: Self) -> Bool {
        a.method == b.method && a.path == b.path && a.query.map(\.name) == b.query.map(\.name)
            && a.query.map(\.value) == b.query.map(\.value) && a.headers == b.headers && a.body == b.body
    }

    package func header(_ name: String) -> String? { headers[name.lowercased()] }

    package func queryValue(_ name: String) -> String? { query.first { $0.name == name }?.value }

    /// The request head is at most this many bytes, and has at most `maximumHeaders` fields.
    package static let maximumHead = 16 << 10
    package static let maximumHeaders = 64
    /// A body is at most this many bytes (an edit names a few keys).
    package static let maximumBody = 16 << 10

    /// What the bytes so far make.
    package enum Parse: Sendable, Equatable {
        /// Not a whole request yet: read more.
        case incomplete
        /// A request, and how many bytes it took.
        case request(ConsoleHTTPRequest, consumed: Int)
        /// Not a request the console serves: answer `status` with `reason` and close.
        case invalid(status: Int, reason: String)
    }

    package static func parse(_ bytes: [UInt8]) -> Parse {
        guard let headEnd = find([13, 10, 13, 10], in: bytes) else {
            return bytes.count > maximumHead
                ? .invalid(status: 431, reason: "the request head is over \(maximumHead) bytes") : .incomplete
        }
        guard headEnd <= maximumHead else {
            return .invalid(status: 431, reason: "the request head is over \(maximumHead) bytes")
        }
        let lines = split(Array(bytes[0..<headEnd]))
        guard let requestLine = lines.first, let text = ascii(requestLine) else {
            return .invalid(status: 400, reason: "the request line is not ASCII text")
        }
        let parts = text.split(separator: " ", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[2] == "HTTP/1.1" || parts[2] == "HTTP/1.0" else {
            return .invalid(status: 400, reason: "the request line is not METHOD TARGET HTTP/1.1")
        }
        let method = String(parts[0])
        guard !method.isEmpty, method.utf8.allSatisfy({ $0 >= 65 && $0 <= 90 }) else {
            return .invalid(status: 400, reason: "the method is not an upper-case token")
        }
        let target = parts[1]
        guard target.hasPrefix("/") else { return .invalid(status: 400, reason: "the target is not a path") }
        let pathPart = target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        guard let path = percentDecoded(pathPart[0]) else {
            return .invalid(status: 400, reason: "the path's percent-encoding is not valid UTF-8")
        }
        var query: [(name: String, value: String)] = []
        if pathPart.count == 2 {
            for item in pathPart[1].split(separator: "&") {
                let pair = item.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                guard let name = percentDecoded(pair[0], plusIsSpace: true),
                    let value = percentDecoded(pair.count == 2 ? pair[1] : "", plusIsSpace: true)
                else { return .invalid(status: 400, reason: "a query item's percent-encoding is not valid UTF-8") }
                query.append((name, value))
            }
        }
        guard lines.count - 1 <= maximumHeaders else {
            return .invalid(status: 431, reason: "more than \(maximumHeaders) header fields")
        }
        var headers: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: 58), colon > 0 else {
                return .invalid(status: 400, reason: "a header field has no name")
            }
            let nameBytes = line[0..<colon]
            guard nameBytes.allSatisfy(isTokenByte), let name = ascii(Array(nameBytes))?.lowercased() else {
                return .invalid(status: 400, reason: "a header field's name is not a token")
            }
            // Field values are visible ASCII, spaces and tabs (obs-text is refused: nothing the console reads
            // needs it).
            let valueBytes = line[(colon + 1)...]
            guard valueBytes.allSatisfy({ $0 == 9 || ($0 >= 32 && $0 < 127) }), let raw = ascii(Array(valueBytes))
            else { return .invalid(status: 400, reason: "the \(name) header has bytes outside visible ASCII") }
            let value = raw.trimmingSpacesAndTabs()
            if let known = headers[name] {
                // One Host and one Content-Length, or the request means two things (request smuggling).
                guard !["host", "content-length", "transfer-encoding", "origin", "authorization"].contains(name) else {
                    return .invalid(status: 400, reason: "the \(name) header appears twice")
                }
                headers[name] = known + (name == "cookie" ? "; " : ", ") + value
            } else {
                headers[name] = value
            }
        }
        if headers["transfer-encoding"] != nil {
            return .invalid(status: 501, reason: "a chunked body is not accepted: send Content-Length")
        }
        var length = 0
        if let text = headers["content-length"] {
            guard !text.isEmpty, text.count <= 6, text.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }), let value = Int(text)
            else { return .invalid(status: 400, reason: "Content-Length is not a number") }
            length = value
        }
        guard length <= maximumBody else {
            return .invalid(status: 413, reason: "the body is over \(maximumBody) bytes")
        }
        let bodyStart = headEnd + 4
        guard bytes.count >= bodyStart + length else { return .incomplete }
        let request = ConsoleHTTPRequest(
            method: method,
            path: path,
            query: query,
            headers: headers,
            body: Array(bytes[bodyStart..<(bodyStart + length)])
        )
        return .request(request, consumed: bodyStart + length)
    }

    static func find(_ needle: [UInt8], in haystack: [UInt8]) -> Int? {
        guard haystack.count >= needle.count else { return nil }
        for start in 0...(haystack.count - needle.count)
        where haystack[start] == needle[0] && Array(haystack[start..<(start + needle.count)]) == needle {
            return start
        }
        return nil
    }

    /// The head's lines, split at CRLF (a bare LF ends a line too, as RFC 9112 allows a recipient to accept).
    static func split(_ head: [UInt8]) -> [[UInt8]] {
        var lines: [[UInt8]] = []
        var current: [UInt8] = []
        for byte in head {
            if byte == 10 {
                if current.last == 13 { current.removeLast() }
                lines.append(current)
                current = []
            } else {
                current.append(byte)
            }
        }
        lines.append(current)
        return lines
    }

    static func ascii(_ bytes: [UInt8]) -> String? {
        guard bytes.allSatisfy({ $0 < 128 }) else { return nil }
        return String(decoding: bytes, as: UTF8.self)
    }

    static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case 48...57, 65...90, 97...122: true
        default: "!#$%&'*+-.^_`|~".utf8.contains(byte)
        }
    }

    static func percentDecoded(_ text: Substring, plusIsSpace: Bool = false) -> String? {
        var bytes: [UInt8] = []
        var index = text.utf8.startIndex
        let utf8 = text.utf8
        while index < utf8.endIndex {
            let byte = utf8[index]
            if byte == 37 {
                let first = utf8.index(after: index)
                guard first < utf8.endIndex else { return nil }
                let second = utf8.index(after: first)
                guard second < utf8.endIndex, let high = hex(utf8[first]), let low = hex(utf8[second]) else {
                    return nil
                }
                bytes.append(high << 4 | low)
                index = utf8.index(after: second)
                continue
            }
            bytes.append(plusIsSpace && byte == 43 ? 32 : byte)
            index = utf8.index(after: index)
        }
        return String(validating: bytes, as: UTF8.self)
    }

    static func hex(_ byte: UInt8) -> UInt8? {
        switch byte {
        case 48...57: byte - 48
        case 65...70: byte - 55
        case 97...102: byte - 87
        default: nil
        }
    }
}

extension String {
    fileprivate func trimmingSpacesAndTabs() -> String {
        var text = Substring(self)
        while text.first == " " || text.first == "\t" { text = text.dropFirst() }
        while text.last == " " || text.last == "\t" { text = text.dropLast() }
        return String(text)
    }
}
