import AgentConfig
import CFuzzerDriver

// config.yaml as the loader reads it: YAML composition (Yams), the schema walk, every value check, the
// consistency checks and the error collection and ordering. A rejected file must come with at least one
// problem that names what is wrong.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzConfigYAML(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    let bytes = UnsafeRawBufferPointer(start: start, count: count)
    guard let yaml = String(validating: bytes, as: UTF8.self) else { return 0 }
    do {
        let configuration = try ConfigurationLoader.decode(yaml: yaml, source: "fuzz.yaml")
        // What `check-config` prints must be producible for every configuration accepted.
        _ = configuration.effectiveYAML()
    } catch {
        precondition(!error.description.isEmpty, "a configuration error without a description")
    }
    return 0
}

/// The entry point SwiftPM links as `main` (`<module>_main`): libFuzzer's driver, with the arguments libFuzzer
/// documents (`-max_total_time=`, corpus directories, …).
@_cdecl("FuzzConfigYAML_main")
public func fuzzerMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> CInt {
    var argc = argc
    var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = argv
    return LLVMFuzzerRunDriver(&argc, &argv) { data, size in
        fuzzConfigYAML(UnsafeRawPointer(data) ?? UnsafeRawPointer(bitPattern: 1)!, size)
    }
}
