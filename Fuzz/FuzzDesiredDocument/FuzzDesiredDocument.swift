import AgentConfig
import CFuzzerDriver

// A retained desired document as it arrives on {root}/desired, motion/group/<g>/desired or motion/fleet/desired:
// decoding (JSON or YAML, version, every runtime key checked by config.yaml's schema), then what the device does
// with an accepted one — offer it to the layers and resolve the effective configuration. An accepted document
// must read back as itself from its own encoding (what `fleet set` publishes).
let layers = ConfigurationLayers(base: AgentConfiguration())

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzDesiredDocument(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    let bytes = Array(UnsafeRawBufferPointer(start: start, count: count))
    let document: DesiredDocument
    do {
        document = try DesiredDocument.decode(bytes, source: "motion/fleet/desired")
    } catch {
        precondition(!error.description.isEmpty, "a refused document without a reason")
        return 0
    }
    let encoded = document.encoded()
    guard let again = try? DesiredDocument.decode(encoded, source: "re-encoded"), again == document else {
        fatalError(
            "an accepted document does not read back from its encoding: \(String(decoding: encoded, as: UTF8.self))"
        )
    }
    var offered = layers
    for layer in [ConfigurationLayer.fleet, .device] {
        _ = offered.receive(document, for: layer, source: "motion/fleet/desired")
    }
    _ = offered.resolve()
    return 0
}

/// The entry point SwiftPM links as `main` (`<module>_main`): libFuzzer's driver, with the arguments libFuzzer
/// documents (`-max_total_time=`, corpus directories, …).
@_cdecl("FuzzDesiredDocument_main")
public func fuzzerMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> CInt {
    var argc = argc
    var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = argv
    return LLVMFuzzerRunDriver(&argc, &argv) { data, size in
        fuzzDesiredDocument(UnsafeRawPointer(data) ?? UnsafeRawPointer(bitPattern: 1)!, size)
    }
}
