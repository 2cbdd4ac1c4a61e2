/// The operators' public keys a device trusts (`control.trusted_keys_file`): one key per line,
///
///     <key id> ed25519 <base64 of the 32-byte public key>   [anything after is a comment]
///
/// with `#` comment lines and blank lines. The key id names the key in every signed envelope (`"key"`), so
/// several keys can be trusted at once — a rotation adds the new key before the old one goes — and a key is
/// revoked by removing its line. `motion-agent keys generate` writes a key pair and prints its line.
package struct TrustedKeyFile: Sendable, Equatable {
    /// Key id → the raw 32-byte Ed25519 public key, in file order.
    package var keys: [(id: String, publicKey: [UInt8])]

    package init(keys: [(id: String, publicKey: [UInt8])]) {
        self.keys = keys
    }

    package static func == (a: TrustedKeyFile, b: TrustedKeyFile) -> Bool {
        a.keys.map(\.id) == b.keys.map(\.id) && a.keys.map(\.publicKey) == b.keys.map(\.publicKey)
    }

    /// At most this many keys: a fleet has a handful of operators; more is a mistake.
    package static let maximumKeys = 64
    /// The file's size limit, bytes.
    package static let maximumBytes = 64 << 10

    /// A key id: 1–64 of `A–Z a–z 0–9 . _ -`, so it is one word in a file and in a log line.
    package static func idProblem(_ id: String) -> String? {
        if id.isEmpty || id.utf8.count > 64 { return "must be 1–64 characters" }
        let allowed = id.unicodeScalars.allSatisfy {
            ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0)
                || "._-".unicodeScalars.contains($0)
        }
        return allowed ? nil : "may hold only letters, digits, '.', '_' and '-'"
    }

    /// Why a trust file could not be read: the line and what is wrong with it.
    package struct Problem: Error, Sendable, Equatable, CustomStringConvertible {
        package var description: String
        init(_ description: String) { self.description = description }
    }

    /// Parses the file's text; the error names the line and what is wrong with it.
    package static func parse(_ text: String) -> Result<TrustedKeyFile, Problem> {
        var keys: [(id: String, publicKey: [UInt8])] = []
        var seen = Set<String>()
        for (index, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = raw.trimmingCharacters(in: .whitespacesAndNewlines)
            if line.isEmpty || line.hasPrefix("#") { continue }
            let words = line.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
            let at = "line \(index + 1)"
            guard words.count >= 3, words[1] == "ed25519" else {
                return .failure(Problem("\(at) is not \"<key id> ed25519 <base64 public key>\""))
            }
            if let problem = idProblem(words[0]) { return .failure(Problem("\(at): the key id \(problem)")) }
            guard seen.insert(words[0]).inserted else {
                return .failure(Problem("\(at) repeats the key id \(words[0])"))
            }
            guard let key = Base64.decode(words[2]), key.count == 32 else {
                return .failure(Problem("\(at): the public key is not the base64 of 32 bytes"))
            }
            keys.append((words[0], key))
            guard keys.count <= maximumKeys else { return .failure(Problem("holds more than \(maximumKeys) keys")) }
        }
        guard !keys.isEmpty else {
            return .failure(Problem("holds no key (lines \"<key id> ed25519 <base64 public key>\")"))
        }
        return .success(TrustedKeyFile(keys: keys))
    }

    /// The line for one key, as `keys generate` prints it.
    package static func line(id: String, publicKey: [UInt8]) -> String {
        "\(id) ed25519 \(Base64.encode(publicKey))"
    }
}

/// Standard base64 (RFC 4648 §4) with padding, for keys and signatures: strict — no whitespace, no other
/// alphabet — so every value has one spelling.
package enum Base64 {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    package static func encode(_ bytes: [UInt8]) -> String {
        var out: [UInt8] = []
        out.reserveCapacity((bytes.count + 2) / 3 * 4)
        var i = 0
        while i < bytes.count {
            let b0 = UInt32(bytes[i])
            let b1 = i + 1 < bytes.count ? UInt32(bytes[i + 1]) : 0
            let b2 = i + 2 < bytes.count ? UInt32(bytes[i + 2]) : 0
            let n = b0 << 16 | b1 << 8 | b2
            out.append(alphabet[Int(n >> 18 & 63)])
            out.append(alphabet[Int(n >> 12 & 63)])
            out.append(i + 1 < bytes.count ? alphabet[Int(n >> 6 & 63)] : UInt8(ascii: "="))
            out.append(i + 2 < bytes.count ? alphabet[Int(n & 63)] : UInt8(ascii: "="))
            i += 3
        }
        return String(decoding: out, as: UTF8.self)
    }

    package static func decode(_ text: String) -> [UInt8]? {
        let chars = Array(text.utf8)
        guard chars.count % 4 == 0 else { return nil }
        func value(_ c: UInt8) -> UInt32? {
            switch c {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"): UInt32(c - UInt8(ascii: "A"))
            case UInt8(ascii: "a")...UInt8(ascii: "z"): UInt32(c - UInt8(ascii: "a") + 26)
            case UInt8(ascii: "0")...UInt8(ascii: "9"): UInt32(c - UInt8(ascii: "0") + 52)
            case UInt8(ascii: "+"): 62
            case UInt8(ascii: "/"): 63
            default: nil
            }
        }
        var out: [UInt8] = []
        out.reserveCapacity(chars.count / 4 * 3)
        var i = 0
        while i < chars.count {
            let last = i + 4 == chars.count
            let pad = last ? (chars[i + 3] == UInt8(ascii: "=") ? (chars[i + 2] == UInt8(ascii: "=") ? 2 : 1) : 0) : 0
            guard let a = value(chars[i]), let b = value(chars[i + 1]) else { return nil }
            let c = pad >= 2 ? 0 : value(chars[i + 2])
            let d = pad >= 1 ? 0 : value(chars[i + 3])
            guard let c, let d else { return nil }
            let n = a << 18 | b << 12 | c << 6 | d
            out.append(UInt8(n >> 16 & 0xFF))
            if pad < 2 { out.append(UInt8(n >> 8 & 0xFF)) }
            if pad < 1 { out.append(UInt8(n & 0xFF)) }
            // Unused bits must be zero: one spelling per value.
            if pad == 2 && (b & 0x0F) != 0 { return nil }
            if pad == 1 && (c & 0x03) != 0 { return nil }
            i += 4
        }
        return out
    }
}
