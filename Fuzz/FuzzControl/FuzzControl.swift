import CFuzzerDriver

// One unsigned control message through the admission the control plane runs (rate limit, size, UTF-8, JSON
// envelope, command and argument parsing, redelivery, age). The rate limit is opened wide so every input
// reaches the parser; one admission lives across inputs so the redelivery memory is exercised too.
nonisolated(unsafe) var admission: ControlAdmission = {
    var settings = ControlAdmission.Settings()
    settings.ratePerSecond = 1e12
    settings.burst = 1e12
    settings.rememberedIDs = 64
    return ControlAdmission(settings: settings, now: 1_763_700_000)
}()

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzControl(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    let bytes = Array(UnsafeRawBufferPointer(start: start, count: count))
    switch admission.admit(bytes, retained: false, now: 1_763_700_000, clockSynchronized: true) {
    case .admitted(let request):
        // Every admitted request must survive a second parse of the same bytes unchanged.
        guard case .success(let again) = ControlRequest.parse(bytes), again == request else {
            fatalError("an admitted command parses differently the second time: \(request)")
        }
    case .refused(let failure):
        // Every refusal is answered: it must say something.
        precondition(!failure.message.isEmpty, "a refusal without a message")
    case .ignored:
        break
    }
    return 0
}

/// The entry point SwiftPM links as `main` (`<module>_main`): libFuzzer's driver, with the arguments libFuzzer
/// documents (`-max_total_time=`, corpus directories, …).
@_cdecl("FuzzControl_main")
public func fuzzerMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> CInt {
    var argc = argc
    var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = argv
    return LLVMFuzzerRunDriver(&argc, &argv) { data, size in
        fuzzControl(UnsafeRawPointer(data) ?? UnsafeRawPointer(bitPattern: 1)!, size)
    }
}
