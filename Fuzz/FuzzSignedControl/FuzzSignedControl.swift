import CFuzzerDriver

// Signed control messages (`control.hmac_key_file`): the envelope, the base64 and hex decoding, the HMAC check,
// the timestamp and nonce rules and then the command inside. The first byte picks how the rest is used: as the
// whole payload (forged, truncated or mangled envelopes), or as the command bytes, signed here with the device's
// key so the fuzzer gets past the signature into the nonce ledger and the command parser.
let key = Array("fuzzing-key-0123456789abcdef".utf8)
let signature = CommandSignature(key: key)
let now = 1_763_700_000.0

nonisolated(unsafe) var admission: ControlAdmission = {
    var settings = ControlAdmission.Settings()
    settings.ratePerSecond = 1e12
    settings.burst = 1e12
    settings.rememberedIDs = 64
    settings.rememberedNonces = 64
    settings.hmacKey = key
    return ControlAdmission(settings: settings, now: now)
}()

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzSignedControl(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    guard count > 0 else { return 0 }
    let raw = UnsafeRawBufferPointer(start: start, count: count)
    let rest = Array(raw[1...])
    let payload = raw[0] & 1 == 0 ? rest : signature.envelope(for: rest)
    if case .success(let opened) = signature.open(payload, maximumSize: 8192) {
        precondition(opened.timestamp.isFinite, "an opened command with a non-finite timestamp")
        precondition(CommandSignature.nonceBytes.contains(opened.nonce.utf8.count), "a nonce outside 8…128 bytes")
    }
    _ = signature.verify(payload, maximumSize: 8192, what: "the desired document")
    switch admission.admit(payload, retained: false, now: now, clockSynchronized: true) {
    case .refused(let failure):
        precondition(!failure.message.isEmpty, "a refusal without a message")
    case .admitted, .ignored:
        break
    }
    return 0
}

/// The entry point SwiftPM links as `main` (`<module>_main`): libFuzzer's driver, with the arguments libFuzzer
/// documents (`-max_total_time=`, corpus directories, …).
@_cdecl("FuzzSignedControl_main")
public func fuzzerMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> CInt {
    var argc = argc
    var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = argv
    return LLVMFuzzerRunDriver(&argc, &argv) { data, size in
        fuzzSignedControl(UnsafeRawPointer(data) ?? UnsafeRawPointer(bitPattern: 1)!, size)
    }
}
