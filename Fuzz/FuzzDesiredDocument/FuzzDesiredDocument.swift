import AgentConfig
import CFuzzerDriver

// A retained desired document as a device that does not sign reads it on {root}/desired, motion/group/<g>/desired
// or motion/fleet/desired (and as a signing device reads the signed object once its envelope checks out):
// strict JSON (never YAML: network input) with its limits, `version`, `clear`, every runtime key checked by
// config.yaml's schema; then what the device does with an accepted one — offer it to the layers (a clear keeps its
// version), resolve the effective configuration — and what `fleet set` makes of it (the next version). An accepted
// document must read back as itself from its own encoding (what `fleet set` publishes).
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
    precondition((1...DesiredDocument.maximumVersion).contains(document.version), "version \(document.version)")
    precondition(!document.clear || document.settings.keyPaths.isEmpty, "a clear that sets something")
    let encoded = document.encoded()
    guard let again = try? DesiredDocument.decode(encoded, source: "re-encoded"), again == document else {
        fatalError(
            "an accepted document does not read back from its encoding: \(String(decoding: encoded, as: UTF8.self))"
        )
    }
    var offered = layers
    for layer in [ConfigurationLayer.fleet, .group("lab"), .device] {
        _ = offered.receive(document, for: layer, source: "motion/fleet/desired")
    }
    _ = offered.resolve()
    // A clear of the fleet layer at the next version takes its settings away and keeps the version.
    if document.version < DesiredDocument.maximumVersion {
        let clear = DesiredDocument.clearing(version: document.version + 1)
        if case .applied = offered.receive(clear, for: .fleet, source: "clear") {
            precondition(offered.documents[.fleet]?.version == document.version + 1, "a clear lost its version")
            let fromFleet = offered.resolve().sources.values.contains {
                if case .desired(.fleet, _) = $0 { return true }
                return false
            }
            precondition(!fromFleet, "a cleared layer still sets a key")
        }
        // `fleet set` with nothing to change: the next version, the same settings.
        if let next = try? document.updating(setting: [:], source: "fleet set") {
            precondition(next.version == document.version + 1, "fleet set's next version is \(next.version)")
        }
    }
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
