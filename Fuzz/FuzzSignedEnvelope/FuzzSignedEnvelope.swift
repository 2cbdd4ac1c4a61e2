import AgentConfig
import AgentControl
import CFuzzerDriver
import MotionWire

// Signed envelopes as a device opens them (`SignedEnvelope.open`) and desired documents as it reads them off a
// desired topic or its state directory (`DesiredDocumentOpener`: envelope, signature, target topic, layer, then the
// document's schema). Byte 0 chooses: bit 0 clear, the rest is the payload as it arrives; bit 0 set, the rest is
// the signed bytes, sealed here with the trusted test key (so mutations reach the target, layer and document
// checks); bits 1–2 the layer and topic it is read for (fleet, group lab, device dev1, or the device topic with the
// fleet layer: a mismatch); bit 3 a device that does not sign (the document read as it is).
//
// Checked: what opens was signed by the trusted key over bytes naming this topic (and layer); the opened members
// never carry `target` or `layer`; an opened document sealed again for its topic and layer (what `fleet set`
// publishes) opens to the same document; every refusal says why.
let key = try! OperatorSigningKey(id: "fuzz-key", privateKey: Array(1...32))
let trusted = try! OperatorKeys(TrustedKeyFile(keys: [(key.id, key.publicKey)]))
let signing = DesiredDocumentOpener(keys: trusted)
let plain = DesiredDocumentOpener(keys: nil)
let places: [(layer: ConfigurationLayer, topic: String)] = [
    (.fleet, "motion/fleet/desired"), (.group("lab"), "motion/group/lab/desired"), (.device, "motion/dev1/desired"),
    (.fleet, "motion/dev1/desired"),
]

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzSignedEnvelope(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
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
    let (layer, topic) = places[Int(raw[0] >> 1) & 3]

    switch SignedEnvelope.open(
        payload,
        topic: topic,
        layer: "\(layer)",
        keys: trusted,
        maximumSize: DesiredDocumentOpener.maximumBytes,
        limits: .desiredDocument,
        what: "the desired document"
    ) {
    case .success(let opened):
        guard let outer = try? StrictJSON.parse(payload, limits: .command),
            let signature = outer["signature"]?.string.flatMap(Base64.decode),
            let signed = outer["signed"]?.string.flatMap(Base64.decode),
            trusted.isValid(signature: signature, of: signed, by: opened.keyID),
            let object = try? StrictJSON.parse(signed, limits: .desiredDocument),
            object["target"]?.string == topic, object["layer"]?.string == "\(layer)"
        else { fatalError("opened without a valid signature for \(topic), layer \(layer)") }
        precondition(
            !opened.members.contains { $0.key == "target" || $0.key == "layer" },
            "the opened members carry target or layer"
        )
    case .failure(let failure):
        precondition(!failure.message.isEmpty, "a refusal without a message")
    }

    let opener = raw[0] & 8 == 0 ? signing : plain
    switch opener.open(payload, layer: layer, topic: topic) {
    case .success(let document):
        precondition((1...DesiredDocument.maximumVersion).contains(document.version), "version \(document.version)")
        // What `fleet set` publishes for it opens to the same document.
        let sealed = DesiredDocumentOpener.payload(
            document,
            layer: layer,
            topic: topic,
            key: opener.keys == nil ? nil : key
        )
        guard case .success(let again) = opener.open(sealed, layer: layer, topic: topic), again == document else {
            fatalError("an opened document does not open again once sealed: \(String(decoding: sealed, as: UTF8.self))")
        }
    case .failure(let refusal):
        precondition(!refusal.reason.isEmpty, "a refused document without a reason")
    }
    return 0
}

/// The entry point SwiftPM links as `main` (`<module>_main`): libFuzzer's driver, with the arguments libFuzzer
/// documents (`-max_total_time=`, corpus directories, …).
@_cdecl("FuzzSignedEnvelope_main")
public func fuzzerMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> CInt {
    var argc = argc
    var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = argv
    return LLVMFuzzerRunDriver(&argc, &argv) { data, size in
        fuzzSignedEnvelope(UnsafeRawPointer(data) ?? UnsafeRawPointer(bitPattern: 1)!, size)
    }
}
