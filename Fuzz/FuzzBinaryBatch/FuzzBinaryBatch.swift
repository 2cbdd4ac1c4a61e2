import CFuzzerDriver
import MotionWire

// MAB binary batches and the JSON stream payloads, as `motion-agent sub`, `watch`, the bench and the tests decode
// what a device published: the strict header checks (a version per kind: device motion 1 or 2), the record walk
// (version 2's flags, accuracies and relative attitude), and each payload kind's JSON decoder.
// A batch the reader accepts must hold exactly the records its header counts.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzBinaryBatch(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    let bytes = Array(UnsafeRawBufferPointer(start: start, count: count))
    if let messages = try? BinaryBatchReader.decode(bytes) {
        let counted = Int(bytes[BinaryBatchLayout.countOffset]) | Int(bytes[BinaryBatchLayout.countOffset + 1]) << 8
        precondition(messages.count == counted, "a batch of \(counted) records decoded to \(messages.count)")
    }
    // The last byte picks the kind, so the fuzzer steers which decoder a mutation reaches.
    let kinds = PayloadKind.allCases
    let kind = kinds[Int(bytes.last ?? 0) % kinds.count]
    _ = try? PayloadDecoder.decode(bytes, kind: kind)
    return 0
}

/// The entry point SwiftPM links as `main` (`<module>_main`): libFuzzer's driver, with the arguments libFuzzer
/// documents (`-max_total_time=`, corpus directories, …).
@_cdecl("FuzzBinaryBatch_main")
public func fuzzerMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> CInt {
    var argc = argc
    var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = argv
    return LLVMFuzzerRunDriver(&argc, &argv) { data, size in
        fuzzBinaryBatch(UnsafeRawPointer(data) ?? UnsafeRawPointer(bitPattern: 1)!, size)
    }
}
