import AgentConfig
import AgentControl
import CFuzzerDriver
import MotionWire

// Signed control messages (`control.trusted_keys_file`): the envelope's strict JSON, its base64, the key lookup, the
// Ed25519 verification, the signed object's target, the signer's counter against the ledger, then the command
// inside. Byte 0 chooses how the rest is used: bit 0 clear, as the whole payload (forged, truncated or mangled
// envelopes); bit 0 set, as the signed bytes, sealed here with the trusted test key so the fuzzer gets past the
// signature into the counter ledger and the command parser. Bit 1 delivers it on the fleet's topic instead of
// the device's (a moved command). One admission lives across inputs, so the ledger fills and its floor rises.
//
// Checked: nothing is admitted unless its envelope carries a valid signature of the trusted key over the signed
// bytes, and those bytes name the topic it arrived on; every refusal says why.
let key = try! OperatorSigningKey(id: "fuzz-key", privateKey: Array(1...32))
let trusted = try! OperatorKeys(TrustedKeyFile(keys: [(key.id, key.publicKey)]))
let now = 1_763_700_000.0

nonisolated(unsafe) var admission: ControlAdmission = {
    var settings = ControlAdmission.Settings()
    settings.ratePerSecond = 1e12
    settings.burst = 1e12
    settings.refusalsPerSecond = 1e12
    settings.refusalBurst = 1e12
    settings.rememberedIDs = 64
    settings.keys = trusted
    return ControlAdmission(settings: settings, now: now)
}()

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzSignedControl(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    guard count > 0 else { return 0 }
    let raw = UnsafeRawBufferPointer(start: start, count: count)
    let rest = Array(raw[1...])
    let payload: [UInt8]
    if raw[0] & 1 == 0 {
        payload = rest
    } else {
        payload = StrictJSON.Value.object([
            ("key", .string(key.id)),
            ("signature", .string(Base64.encode(key.signature(of: rest)))),
            ("signed", .string(Base64.encode(rest))),
        ]).encoded()
    }
    let topic = raw[0] & 2 == 0 ? "motion/dev1/control" : "motion/fleet/control"
    switch admission.admit(payload, topic: topic, retained: false, now: now, clockSynchronized: true) {
    case .admitted(let request):
        // The door let it through: it must be the trusted key's signature over bytes that name this topic.
        guard let outer = try? StrictJSON.parse(payload, limits: .command),
            let keyID = outer["key"]?.string,
            let signature = outer["signature"]?.string.flatMap(Base64.decode),
            let signed = outer["signed"]?.string.flatMap(Base64.decode),
            trusted.isValid(signature: signature, of: signed, by: keyID),
            let object = try? StrictJSON.parse(signed, limits: .command),
            object["target"]?.string == topic
        else {
            fatalError("admitted without a valid signature for \(topic): \(request)")
        }
        guard case .object(let members) = object,
            case .success(let again) = ControlRequest.parse(
                members: members.filter { $0.key != "target" && $0.key != "layer" }
            ),
            again == request
        else { fatalError("an admitted command parses differently from its signed object: \(request)") }
    case .refused(let failure):
        precondition(!failure.message.isEmpty, "a refusal without a message")
        if let id = failure.id { precondition(id.utf8.count <= 128, "a refusal echoing a \(id.utf8.count)-byte id") }
    case .ignored:
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
