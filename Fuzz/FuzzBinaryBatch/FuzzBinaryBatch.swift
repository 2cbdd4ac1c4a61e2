import AgentPorts
import CFuzzerDriver
import MotionWire

// MAB binary batches and the JSON stream payloads, as `motion-agent sub`, `watch`, the bench and the tests decode
// what a device published: the strict header checks (a version per kind: device motion 1 or 2), the record walk
// (version 2's flags, accuracies and relative attitude), and each payload kind's JSON decoder.
// A batch the reader accepts must hold exactly the records its header counts, and the writer must give it back:
// in the version the writer writes, writing what the reader decoded reproduces the input byte for byte, except
// that a NaN in an f32 field may come back with its payload quieted (f32 → Double → f32).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzBinaryBatch(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    let bytes = Array(UnsafeRawBufferPointer(start: start, count: count))
    if let messages = try? BinaryBatchReader.decode(bytes) {
        let counted = Int(bytes[BinaryBatchLayout.countOffset]) | Int(bytes[BinaryBatchLayout.countOffset + 1]) << 8
        precondition(messages.count == counted, "a batch of \(counted) records decoded to \(messages.count)")
        if let kind = BinaryBatchLayout.Kind(rawValue: bytes[4]),
            bytes[BinaryBatchLayout.versionOffset] == kind.version,
            !messages.isEmpty
        {
            let rewritten = write(messages, kind: kind)
            precondition(rewritten.count == bytes.count, "rewritten as \(rewritten.count) bytes, read \(bytes.count)")
            for i in bytes.indices where rewritten[i] != bytes[i] {
                precondition(
                    isInNaN(i, bytes, recordSize: kind.recordSize),
                    "byte \(i) written back as \(rewritten[i]), read \(bytes[i])"
                )
            }
        }
    }
    // The last byte picks the kind, so the fuzzer steers which decoder a mutation reaches.
    let kinds = PayloadKind.allCases
    let kind = kinds[Int(bytes.last ?? 0) % kinds.count]
    _ = try? PayloadDecoder.decode(bytes, kind: kind)
    return 0
}

/// `messages` as `BinaryBatchWriter` writes them.
func write(_ messages: [WireMessage], kind: BinaryBatchLayout.Kind) -> [UInt8] {
    var writer = BinaryBatchWriter(kind: kind)
    writer.reserve(records: messages.count)
    for m in messages {
        precondition(writer.append(m.envelope, m.payload), "the writer refused a record the reader accepted")
    }
    return writer.withBytes { Array($0) }
}

/// Whether byte `i` lies in an f32 field of a record (bytes 16–83 and 88–111 of a record; the f64 and u8 fields
/// travel untouched) that holds a NaN.
func isInNaN(_ i: Int, _ bytes: [UInt8], recordSize: Int) -> Bool {
    guard i >= BinaryBatchLayout.headerSize else { return false }
    let record = BinaryBatchLayout.headerSize + (i - BinaryBatchLayout.headerSize) / recordSize * recordSize
    let o = i - record
    guard (16..<84).contains(o) || (88..<112).contains(o) else { return false }
    let field = record + o / 4 * 4
    var pattern: UInt32 = 0
    for k in (0..<4).reversed() { pattern = pattern << 8 | UInt32(bytes[field + k]) }
    return Float(bitPattern: pattern).isNaN
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
