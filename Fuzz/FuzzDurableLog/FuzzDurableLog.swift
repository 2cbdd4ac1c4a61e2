import CFuzzerDriver
import Foundation
import Logging
import Platform

@testable import AgentPipeline

// The durable outbox's recovery and record reader fed a corrupt segment, as a power cut or a bad flash block
// leaves one: opening must cut a torn or corrupt tail off (never crash), every record handed out must be whole,
// in seq order and above the cursor, and the log must accept and hand out a new record afterwards.
//
// Input: byte 0 is flags (bit 0: recompute each record's CRC as its length field frames it, so mutations reach
// the checks behind the CRC; bit 1: write a cursor file, from bytes 1…8), then the segment file's bytes.
let directory: String = {
    let base = FileManager.default.fileExists(atPath: "/dev/shm") ? "/dev/shm" : NSTemporaryDirectory()
    return "\(base)/motion-fuzz-durable-\(getpid())"
}()
let logger: Logger = {
    var logger = Logger(label: "fuzz")
    logger.logLevel = .critical
    return logger
}()

/// Rewrites each record's CRC over the body its length field claims, as far as the bytes go.
func resealed(_ segment: [UInt8]) -> [UInt8] {
    var bytes = segment
    var offset = 0
    while bytes.count - offset >= DurableLog.headerBytes {
        let length = bytes.withUnsafeBytes {
            Int(UInt32(littleEndian: $0.loadUnaligned(fromByteOffset: offset, as: UInt32.self)))
        }
        let end = offset + DurableLog.headerBytes + length
        guard length > 0, end <= bytes.count else { break }
        let crc = bytes.withUnsafeBytes {
            CRC32.checksum(UnsafeRawBufferPointer(rebasing: $0[(offset + DurableLog.headerBytes)..<end]))
        }
        bytes.withUnsafeMutableBytes { $0.storeBytes(of: crc.littleEndian, toByteOffset: offset + 4, as: UInt32.self) }
        offset = end
    }
    return bytes
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzDurableLog(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    guard count > 0 else { return 0 }
    let raw = UnsafeRawBufferPointer(start: start, count: count)
    let flags = raw[0]
    var cursor: UInt64 = 0
    var body = Array(raw[1...])
    if flags & 2 != 0 && body.count >= 8 {
        cursor = body.withUnsafeBytes { UInt64(littleEndian: $0.loadUnaligned(as: UInt64.self)) } % 64
        body.removeFirst(8)
    }
    if flags & 1 != 0 { body = resealed(body) }

    try? FileManager.default.removeItem(atPath: directory)
    try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: directory) }
    FileManager.default.createFile(atPath: directory + "/00000000000000000001.log", contents: Data(body))
    if cursor > 0 {
        FileManager.default.createFile(atPath: directory + "/cursor", contents: Data("\(cursor)\n".utf8))
    }

    let log: DurableLog
    do {
        log = try DurableLog(
            storage: try SegmentFiles(folder: directory),
            maxBytes: 1 << 20,
            maxAgeSeconds: 86_400,
            logger: logger
        )
    } catch {
        fatalError("the log did not open over a corrupt segment: \(error)")
    }
    let now: UInt64 = 1_763_700_000_000
    var last = log.snapshot.cursor
    var handed = 0
    while let record = log.next(nowMillis: now) {
        precondition(record.seq > last, "record \(record.seq) handed out after \(last)")
        precondition(record.topic.utf8.count <= DurableLog.maxTopicBytes, "a record with an oversized topic")
        last = record.seq
        log.markPublished(record.seq)
        log.acknowledge(record.seq)
        handed += 1
        precondition(handed <= body.count, "more records than the segment could hold")
    }
    let appended: UInt64
    do {
        appended = try [UInt8]("after".utf8).withUnsafeBytes {
            try log.append(topic: "motion/fuzz/accelerometer", qos: 1, retain: false, payload: $0, nowMillis: now)
        }
    } catch {
        fatalError("the log refused a message after opening a corrupt segment: \(error)")
    }
    guard let record = log.next(nowMillis: now), record.seq == appended, record.payload == Array("after".utf8) else {
        fatalError("the message appended after recovery did not come back")
    }
    log.markPublished(record.seq)
    log.acknowledge(record.seq)
    log.maintain(nowMillis: now)
    log.close()
    return 0
}

/// The entry point SwiftPM links as `main` (`<module>_main`): libFuzzer's driver, with the arguments libFuzzer
/// documents (`-max_total_time=`, corpus directories, …).
@_cdecl("FuzzDurableLog_main")
public func fuzzerMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> CInt {
    var argc = argc
    var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = argv
    return LLVMFuzzerRunDriver(&argc, &argv) { data, size in
        fuzzDurableLog(UnsafeRawPointer(data) ?? UnsafeRawPointer(bitPattern: 1)!, size)
    }
}
