import CFuzzerDriver
import Foundation
import Recording

// The record/replay CSV as replay and `motion-agent process` read it: the header, every cell, the time order,
// the line-length bound, the block-by-block reading. The input is written to a file (the reader takes a path)
// in a per-process directory on a tmpfs when there is one.
let directory: String = {
    let base = FileManager.default.fileExists(atPath: "/dev/shm") ? "/dev/shm" : NSTemporaryDirectory()
    let path = "\(base)/motion-fuzz-recording-\(getpid())"
    try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    return path
}()
let file = directory + "/input.csv"

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzRecordingCSV(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    guard FileManager.default.createFile(atPath: file, contents: Data(bytes: start, count: count)) else {
        fatalError("cannot write \(file): the fuzzer needs a writable temporary directory")
    }
    do {
        var reader = try RecordingReader(path: file)
        var previous = -Double.infinity
        while let sample = try reader.next() {
            precondition(sample.timestamp >= previous, "the reader returned a row out of time order")
            previous = sample.timestamp
        }
    } catch {
        precondition(!error.description.isEmpty, "a refused recording without a reason")
    }
    return 0
}

/// The entry point SwiftPM links as `main` (`<module>_main`): libFuzzer's driver, with the arguments libFuzzer
/// documents (`-max_total_time=`, corpus directories, …).
@_cdecl("FuzzRecordingCSV_main")
public func fuzzerMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> CInt {
    var argc = argc
    var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = argv
    return LLVMFuzzerRunDriver(&argc, &argv) { data, size in
        fuzzRecordingCSV(UnsafeRawPointer(data) ?? UnsafeRawPointer(bitPattern: 1)!, size)
    }
}
