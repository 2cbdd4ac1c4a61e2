import AgentConfig
import AgentControl
import CFuzzerDriver

// The key files: a device's trusted keys file (`control.trusted_keys_file`, TrustedKeyFile) with the strict base64
// it shares with every envelope, and an operator's private key file (`--signing-key`, OperatorSigningKey). The
// input is the file's text (byte 0 chooses which parser; the rest is the text).
//
// Checked: a parsed trust file holds 1–64 distinct valid key ids of 32-byte keys, and its lines (as `keys generate`
// prints them) parse back to the same file; base64 has one spelling per value (decode then encode gives the text
// back) and round-trips any bytes; a parsed private key's trust line parses as a trust file of that key.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTrustedKeyFile(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    guard count > 0 else { return 0 }
    let raw = UnsafeRawBufferPointer(start: start, count: count)
    let rest = Array(raw[1...])
    let text = String(decoding: rest, as: UTF8.self)

    if let decoded = Base64.decode(text) {
        precondition(Base64.encode(decoded) == text, "two spellings of one value: \(text)")
    }
    precondition(Base64.decode(Base64.encode(rest)) == rest, "base64 does not round-trip \(rest.count) bytes")

    if raw[0] & 1 == 0 {
        switch TrustedKeyFile.parse(text) {
        case .success(let file):
            precondition((1...TrustedKeyFile.maximumKeys).contains(file.keys.count), "\(file.keys.count) keys")
            precondition(Set(file.keys.map(\.id)).count == file.keys.count, "a repeated key id")
            for key in file.keys {
                precondition(TrustedKeyFile.idProblem(key.id) == nil, "an invalid key id: \(key.id)")
                precondition(key.publicKey.count == 32, "a \(key.publicKey.count)-byte key")
            }
            let lines = file.keys.map { TrustedKeyFile.line(id: $0.id, publicKey: $0.publicKey) }
            guard case .success(let again) = TrustedKeyFile.parse(lines.joined(separator: "\n")), again == file else {
                fatalError("the file's lines do not parse back to it: \(lines)")
            }
            // Accepted by the agent only when every key is a valid Ed25519 public key; either way no trap.
            _ = try? OperatorKeys(file)
        case .failure(let problem):
            precondition(!problem.description.isEmpty, "a refused file without a reason")
        }
    } else {
        do {
            let key = try OperatorSigningKey.parse(text)
            guard case .success(let file) = TrustedKeyFile.parse(key.trustLine), file.keys.count == 1,
                file.keys[0].id == key.id, file.keys[0].publicKey == key.publicKey
            else { fatalError("the trust line of \(key.id) does not parse back") }
            precondition(key.signature(of: rest).count == 64, "a signature that is not 64 bytes")
        } catch {
            precondition(!error.description.isEmpty, "a refused key file without a reason")
        }
    }
    return 0
}

/// The entry point SwiftPM links as `main` (`<module>_main`): libFuzzer's driver, with the arguments libFuzzer
/// documents (`-max_total_time=`, corpus directories, …).
@_cdecl("FuzzTrustedKeyFile_main")
public func fuzzerMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> CInt {
    var argc = argc
    var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = argv
    return LLVMFuzzerRunDriver(&argc, &argv) { data, size in
        fuzzTrustedKeyFile(UnsafeRawPointer(data) ?? UnsafeRawPointer(bitPattern: 1)!, size)
    }
}
