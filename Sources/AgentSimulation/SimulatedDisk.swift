import AgentPorts
import Synchronization

/// A device's storage in the simulation: the state directory's files and the durable outbox's segments, in
/// memory, with exactly the promises Platform makes on a real disk.
///
/// - A state file (`StateDirectory.replace`) and the outbox's cursor are replaced atomically and durably (a
///   temporary file, fsync, rename, fsync of the folder): once the call returns they survive anything.
/// - A segment record is one `write(2)`, not fsynced: a killed process loses nothing (the page cache outlives
///   it), a power cut loses what the kernel had not yet written back — any tail of the unsynced bytes, torn in
///   the middle of a record or not. `writeBack()` is the kernel's periodic flush.
/// - A full disk (`capacityBytes`) refuses what does not fit, with the no-space error the real calls give.
///
/// The agent reaches it through handles (`directory()`); a crash or power cut retires the handles of that run,
/// so nothing the dead process's unwinding tasks still try to write reaches the disk.
package final class SimulatedDisk: @unchecked Sendable {
    struct Segment {
        var bytes: [UInt8] = []
        /// Bytes the kernel has written back: what a power cut cannot take.
        var synced = 0
    }

    /// A record the durable log wrote, as the checker follows it.
    package struct Record: Sendable {
        package enum Fate: Sendable, Equatable {
            /// On disk (or removed after its acknowledgement: see `removedWhileFull`).
            case written
            /// Cut off by a power cut before the kernel wrote it back.
            case lostInPowerCut
        }

        package var topic: String
        package var payload: [UInt8]
        package var fate: Fate
        /// Its segment was removed while the disk was full (the log makes room that way, counting what it drops).
        package var removedWhileFull = false
        var segment: String
        var offset: Int
    }

    struct Contents {
        var records: [Record] = []
        /// Per segment, indices into `records` in file order.
        var recordsBySegment: [String: [Int]] = [:]
        var files: [String: [UInt8]] = [:]
        var segments: [String: Segment] = [:]
        var cursor: String?
        var generation = 0
        var capacityBytes: Int?

        var usedBytes: Int {
            files.values.reduce(0) { $0 + $1.count } + segments.values.reduce(0) { $0 + $1.bytes.count }
                + (cursor?.utf8.count ?? 0)
        }
    }

    let contents = Mutex(Contents())
    /// The state directory's path, for messages.
    package let path: String

    package init(path: String = "/var/lib/motion-agent") {
        self.path = path
    }

    /// The state directory as the current run of the agent sees it.
    package func directory() -> SimulatedStateDirectory {
        SimulatedStateDirectory(disk: self, generation: contents.withLock { $0.generation })
    }

    /// The file system's size; nil: never full. Setting it below what is used makes every write fail.
    package var capacityBytes: Int? {
        get { contents.withLock { $0.capacityBytes } }
        set { contents.withLock { $0.capacityBytes = newValue } }
    }

    package var usedBytes: Int { contents.withLock { $0.usedBytes } }

    /// The process died (SIGKILL, a crash): everything written stays, the dead run's handles are retired.
    package func processDied() {
        contents.withLock { $0.generation += 1 }
    }

    /// The power went: each segment keeps what was written back and, of the rest, a prefix `keep` chooses
    /// (given the unsynced byte count, it returns how many of them survive). Handles are retired.
    package func powerCut(keep: (Int) -> Int) {
        contents.withLock { contents in
            contents.generation += 1
            for name in contents.segments.keys.sorted() {
                guard var segment = contents.segments[name] else { continue }
                let unsynced = segment.bytes.count - segment.synced
                if unsynced > 0 {
                    let kept = min(unsynced, max(0, keep(unsynced)))
                    segment.bytes.removeLast(unsynced - kept)
                    // A record any of whose bytes went is lost (the log cuts a torn tail at its next open).
                    for index in contents.recordsBySegment[name] ?? [] {
                        let record = contents.records[index]
                        if record.offset + Self.recordLength(record) > segment.bytes.count {
                            contents.records[index].fate = .lostInPowerCut
                        }
                    }
                }
                segment.synced = segment.bytes.count
                contents.segments[name] = segment
            }
        }
    }

    /// The kernel writes dirty pages back (every few seconds on Linux): what is written now survives a power cut.
    package func writeBack() {
        contents.withLock { contents in
            for name in contents.segments.keys.sorted() {
                guard var segment = contents.segments[name] else { continue }
                segment.synced = segment.bytes.count
                contents.segments[name] = segment
            }
        }
    }

    /// Every record a durable log on this disk wrote, in order, with what became of it.
    package var records: [Record] { contents.withLock { $0.records } }

    /// The bytes a record took in its segment: the log's header (length, CRC-32), its fixed fields, topic, payload.
    static func recordLength(_ record: Record) -> Int { 8 + 20 + record.topic.utf8.count + record.payload.count }

    /// Reads one record as `DurableLog` writes it: u32 body length, u32 CRC, then the body — u64 seq, u64 time,
    /// u8 qos, u8 retain, u16 topic length, topic, payload (little-endian).
    static func parseRecord(_ bytes: UnsafeRawBufferPointer) -> (topic: String, payload: [UInt8])? {
        guard bytes.count >= 28 else { return nil }
        let topicLength = Int(bytes[26]) | Int(bytes[27]) << 8
        guard bytes.count >= 28 + topicLength else { return nil }
        let topic = String(decoding: bytes[28..<(28 + topicLength)], as: UTF8.self)
        return (topic, Array(bytes[(28 + topicLength)...]))
    }

    /// A state file's bytes as on disk now (for the checker).
    package func file(_ file: StateFile) -> [UInt8]? {
        contents.withLock { $0.files[file.relativePath] }
    }
}

/// One run's view of a `SimulatedDisk`: the agent's `StateDirectory`.
package final class SimulatedStateDirectory: StateDirectory, @unchecked Sendable {
    let disk: SimulatedDisk
    let generation: Int

    init(disk: SimulatedDisk, generation: Int) {
        self.disk = disk
        self.generation = generation
    }

    package var path: String { disk.path }

    /// Whether the process this handle belongs to is still the one running.
    var isCurrent: Bool { disk.contents.withLock { $0.generation == generation } }

    static let gone = StateFileError("the process that held this state directory is gone")

    package func read(_ file: StateFile) throws(StateFileError) -> [UInt8]? {
        disk.contents.withLock { $0.files[file.relativePath] }
    }

    package func replace(_ file: StateFile, with bytes: [UInt8]) throws(StateFileError) {
        let outcome = disk.contents.withLock { contents -> StateFileError? in
            guard contents.generation == generation else { return Self.gone }
            let previous = contents.files[file.relativePath]?.count ?? 0
            if let capacity = contents.capacityBytes, contents.usedBytes - previous + bytes.count > capacity {
                return StateFileError(
                    "cannot write \(path)/\(file.relativePath): No space left on device — free space on the state directory's file system",
                    isNoSpace: true
                )
            }
            contents.files[file.relativePath] = bytes
            return nil
        }
        if let outcome { throw outcome }
    }

    package func remove(_ file: StateFile) throws(StateFileError) {
        let alive = disk.contents.withLock { contents -> Bool in
            guard contents.generation == generation else { return false }
            contents.files[file.relativePath] = nil
            return true
        }
        if !alive { throw Self.gone }
    }

    package func location(of file: StateFile) -> String {
        // SQLite's in-memory database: the history is not part of what the simulation explores.
        file == .history ? ":memory:" : path + "/" + file.relativePath
    }

    package func segmentStorage() throws(StateFileError) -> any SegmentStorage {
        SimulatedSegmentStorage(directory: self)
    }
}

/// The durable outbox's folder on a `SimulatedDisk`.
final class SimulatedSegmentStorage: SegmentStorage {
    private let directory: SimulatedStateDirectory
    private var appending: String?

    init(directory: SimulatedStateDirectory) {
        self.directory = directory
    }

    private var disk: SimulatedDisk { directory.disk }

    var folder: String { directory.path + "/outbox" }

    func segmentNames() -> [String] {
        disk.contents.withLock { $0.segments.keys.sorted() }
    }

    func contents(of segment: String) -> [UInt8]? {
        disk.contents.withLock { $0.segments[segment]?.bytes }
    }

    func truncate(_ segment: String, to bytes: Int) {
        disk.contents.withLock { contents in
            guard contents.generation == directory.generation, var found = contents.segments[segment] else { return }
            if found.bytes.count > bytes { found.bytes.removeLast(found.bytes.count - bytes) }
            found.synced = min(found.synced, found.bytes.count)
            contents.segments[segment] = found
        }
    }

    func remove(_ segment: String) {
        disk.contents.withLock { contents in
            guard contents.generation == directory.generation else { return }
            contents.segments[segment] = nil
            let full = contents.capacityBytes.map { contents.usedBytes >= $0 - (64 << 10) } ?? false
            if full {
                for index in contents.recordsBySegment[segment] ?? [] {
                    contents.records[index].removedWhileFull = true
                }
            }
            contents.recordsBySegment[segment] = nil
        }
        if appending == segment { appending = nil }
    }

    func beginAppending(to segment: String, existing: Bool) throws(StateFileError) {
        let failure = disk.contents.withLock { contents -> StateFileError? in
            guard contents.generation == directory.generation else { return SimulatedStateDirectory.gone }
            if !existing || contents.segments[segment] == nil {
                if let capacity = contents.capacityBytes, contents.usedBytes >= capacity {
                    return StateFileError(
                        "cannot create \(folder)/\(segment) for writing: No space left on device — check the state directory",
                        isNoSpace: true
                    )
                }
                contents.segments[segment] = SimulatedDisk.Segment()
            }
            return nil
        }
        if let failure { throw failure }
        appending = segment
    }

    func append(_ bytes: UnsafeRawBufferPointer, length: Int) -> SegmentAppendOutcome {
        guard let appending else { return .failed("no segment is open for writing") }
        return disk.contents.withLock { contents -> SegmentAppendOutcome in
            guard contents.generation == directory.generation else { return .failed("the process is gone") }
            guard let offset = contents.segments[appending]?.bytes.count else {
                return .failed("the segment was removed")
            }
            if let capacity = contents.capacityBytes, contents.usedBytes + bytes.count > capacity { return .noSpace }
            if let (topic, payload) = SimulatedDisk.parseRecord(bytes) {
                contents.recordsBySegment[appending, default: []].append(contents.records.count)
                contents.records.append(
                    SimulatedDisk.Record(
                        topic: topic,
                        payload: payload,
                        fate: .written,
                        segment: appending,
                        offset: offset
                    )
                )
            }
            // In place: a copy of the segment taken out and put back copied its whole byte array on every record.
            contents.segments[appending]?.bytes.append(contentsOf: bytes)
            return .written
        }
    }

    func freeBytes() -> Int {
        disk.contents.withLock { contents in
            guard let capacity = contents.capacityBytes else { return .max }
            return max(0, capacity - contents.usedBytes)
        }
    }

    func read(_ segment: String, at offset: Int, into buffer: UnsafeMutableRawBufferPointer) -> Int {
        disk.contents.withLock { contents -> Int in
            guard let bytes = contents.segments[segment]?.bytes else { return -1 }
            guard offset < bytes.count else { return 0 }
            let count = min(buffer.count, bytes.count - offset)
            bytes.withUnsafeBytes { raw in
                buffer.baseAddress!.copyMemory(from: raw.baseAddress! + offset, byteCount: count)
            }
            return count
        }
    }

    func readCursor() -> String? {
        disk.contents.withLock { $0.cursor }
    }

    func writeCursor(_ text: String) throws(StateFileError) {
        let failure = disk.contents.withLock { contents -> StateFileError? in
            guard contents.generation == directory.generation else { return SimulatedStateDirectory.gone }
            if let capacity = contents.capacityBytes,
                contents.usedBytes - (contents.cursor?.utf8.count ?? 0) + text.utf8.count > capacity
            {
                return StateFileError(
                    "cannot replace \(folder)/cursor: No space left on device — free space on the state directory's file system",
                    isNoSpace: true
                )
            }
            contents.cursor = text
            return nil
        }
        if let failure { throw failure }
    }

    func closeFiles() {
        appending = nil
    }
}
