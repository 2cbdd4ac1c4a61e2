import AgentPorts
import Foundation
import Logging

/// The on-disk part of the outbox: messages of durable streams stay here until the broker acknowledges them,
/// so neither a broker outage nor an agent crash (SIGKILL included) loses them.
///
/// Layout, in its folder of the state directory (`SegmentStorage`, which does the I/O):
/// - segment files `<first seq, 20 digits>.log`, each at most `segmentBytes` (≤ 4 MiB), append-only. A record
///   is `u32 length of the body, u32 CRC-32 of the body, body`, the body being `u64 seq, u64 enqueue wall time
///   (ms since 1970), u8 qos, u8 retain, u16 topic length, topic (UTF-8), payload`, all little-endian. The
///   wall time is what `max_age_s` is measured against.
/// - `cursor`: the highest seq such that it and every seq before it were acknowledged (decimal text),
///   replaced atomically (write, fsync, rename) by `maintain` and `close`.
///
/// A record is written with one write and not fsynced: the page cache outlives a killed process, and a
/// power cut costs at most what the kernel had not flushed. A torn or corrupt tail (the CRC or the length do
/// not match) is cut off at open with a log line, never a crash.
///
/// Bounds: past `maxBytes` the oldest whole segments go; records older than `maxAgeSeconds` go; every record
/// that goes without an acknowledgement is counted in `dropped`, exactly.
///
/// A record's age is measured on the wall clock it was stamped with, which can step (NTP correcting a clock that
/// was a day off, an operator setting it). While the log is open it watches the wall clock against the
/// monotonic one: a step moves the times of every record already written by the same amount, so a step forward
/// does not make a record written a second ago look a day old and drop it (found by the fault explorer: a
/// +86 400 s step dropped every unacknowledged record as past `max_age_s`).
///
/// A full file system is a third bound: the log leaves `reservedFreeBytes` free for the small state files
/// (the cursor, health.json, desired documents, calibration) and, when a record does not fit, drops its oldest
/// segments as `maxBytes` would, then the record itself. `storageProblem` says so until a record fits again
/// with room to spare; logging resumes by itself.
///
/// Thread-safe: one lock around the state; the writer thread appends, the publisher reads and the connection
/// supervisor acknowledges.
package final class DurableLog: @unchecked Sendable {
    package struct Counters: Sendable, Hashable, Codable {
        /// Records written since start.
        package var appended: UInt64 = 0
        /// Records handed to the MQTT client since start (replays included).
        package var published: UInt64 = 0
        /// Records the broker acknowledged since start.
        package var acknowledged: UInt64 = 0
        /// Records discarded unacknowledged (the bounds), since start: exact.
        package var dropped: UInt64 = 0
        /// Messages refused before they entered the log (invalid topic or oversized payload).
        package var rejected: UInt64 = 0
        /// Bytes cut off torn or corrupt segment tails at open.
        package var truncatedBytes: UInt64 = 0
        /// Records not yet acknowledged.
        package var depth: Int = 0
        /// Records not yet handed to the client.
        package var backlog: Int = 0
        /// Bytes of the segment files.
        package var bytes: Int = 0
        package var segments: Int = 0
        /// The acknowledgement cursor.
        package var cursor: UInt64 = 0
        /// Records (included in `dropped`) that never reached the disk: the file system was full or the write
        /// failed.
        package var droppedNoSpace: UInt64 = 0
        /// Records (included in `dropped`) not sent because they were older than their stream's expiry
        /// (`streams.<name>.expiry_s`) when their turn came.
        package var expired: UInt64 = 0
        /// What is wrong with the log's storage, what the log does meanwhile and the fix; nil when all is well.
        package var storageProblem: String?
    }

    /// One message read back from the log.
    package struct Record: Sendable, Equatable {
        package var seq: UInt64
        package var timeMillis: UInt64
        package var qos: Int
        package var retain: Bool
        package var topic: String
        package var payload: [UInt8]
    }

    /// Why the log could not be opened or written.
    package struct Failure: Error, CustomStringConvertible {
        package var description: String
    }

    struct Segment {
        /// The file's name in the folder.
        var name: String
        var firstSeq: UInt64
        var lastSeq: UInt64
        var count: Int
        var bytes: Int
        var lastTimeMillis: UInt64
    }

    static let headerBytes = 8
    static let fixedBodyBytes = 20
    package static let maxTopicBytes = TopicScheme.maximumBytes
    package static let maxSegmentBytes = 4 << 20
    /// The largest payload a record may carry, so every record fits in one segment.
    package static let maxPayloadBytes = 1 << 20
    /// Seqs at or above this are corrupt (2⁶² messages is 14 million years at 10 kHz): a record or a cursor that
    /// claims one would make the next seq overflow, so the log refused to open and the agent could not start
    /// (found by Fuzz/FuzzDurableLog).
    static let maximumSeq: UInt64 = 1 << 62
    /// 2020-01-01 in ms since 1970: an enqueue time before it was taken from an unsynchronized clock (a board
    /// without a real-time clock starts in 1970), so the record's age is unknown and the age bound spares it —
    /// otherwise the clock's first synchronization would make every record look decades old.
    static let plausibleWallTimeMillis: UInt64 = 1_577_836_800_000

    /// The folder, for messages.
    package let directory: String
    package let maxBytes: Int
    package let maxAgeSeconds: Double
    package let segmentBytes: Int
    private let logger: Logger
    private let lock = NSLock()
    /// The folder's files; used under `lock` only.
    private let storage: any SegmentStorage

    private var segments: [Segment] = []
    /// Whether a segment is open for appending.
    private var appending = false
    private var cursor: UInt64 = 0
    private var cursorWritten: UInt64 = 0
    /// Acknowledged seqs above the cursor, waiting for the gap below them to close (QoS 1 acks may arrive
    /// out of order).
    private var acked: Set<UInt64> = []
    /// Records handed to the client whose segment was dropped before their acknowledgement arrived.
    private var orphaned: Set<UInt64> = []
    private static let maximumOrphaned = 65_536
    private var nextSeq: UInt64 = 1
    /// The next record to hand out: segment index and byte offset.
    private var readIndex = 0
    private var readOffset = 0
    private var handedSeq: UInt64 = 0
    /// What `next` returned last, so `markPublished` steps over it without reading it again.
    private var peeked: (index: Int, offset: Int, seq: UInt64, size: Int)?
    private var counters = Counters()
    private var writeBuffer: [UInt8] = []
    /// Free bytes of the log's file system at the last `fstatvfs`, less what was appended since.
    private var freeEstimate = Int.max
    private var appendsSinceSpaceCheck = 0
    private var cursorProblemLogged = false
    /// The monotonic clock, against which steps of the wall clock are seen; nil: steps are not looked for (the
    /// `nowMillis` arguments are then the only clock, as in tests that move wall time alone).
    private let monotonicMillis: (@Sendable () -> Int64)?
    /// Wall time minus monotonic time at the last look, ms; nil before the first.
    private var wallMinusMonotonic: Int64?
    /// Steps of the wall clock seen while open: every record up to `throughSeq` was stamped `deltaMillis` off.
    private var steps: [(throughSeq: UInt64, deltaMillis: Int64)] = []
    /// A change of wall minus monotonic time beyond this is a step; NTP slews far less.
    static let stepThresholdMillis: Int64 = 2000

    /// Space the log leaves free in its file system for the agent's other state files, which must still be
    /// replaceable (write, fsync, rename) while the log is full.
    package static let reservedFreeBytes = 256 << 10

    /// Opens the log in `storage`'s folder, cutting off torn tails.
    ///
    /// - Parameters:
    ///   - maxBytes: the bound on the segment files' total size; segments are at most a quarter of it (and
    ///     at most 4 MiB), so dropping one frees a bounded part.
    ///   - maxAgeSeconds: records older than this are dropped.
    ///   - clock: the agent's clock, whose monotonic half reveals steps of the wall clock the `nowMillis`
    ///     arguments are read from; nil: no steps are looked for.
    package init(
        storage: any SegmentStorage,
        maxBytes: Int,
        maxAgeSeconds: Double,
        clock: (any AgentClock)? = nil,
        logger: Logger
    ) throws(Failure) {
        self.storage = storage
        if let clock {
            monotonicMillis = { Int64(clock.monotonicSeconds() * 1000) }
        } else {
            monotonicMillis = nil
        }
        directory = storage.folder
        self.maxBytes = max(4096, maxBytes)
        self.maxAgeSeconds = maxAgeSeconds
        segmentBytes = min(Self.maxSegmentBytes, max(1024, self.maxBytes / 4))
        self.logger = logger
        cursor = storage.readCursor().flatMap { UInt64($0.trimmingCharacters(in: .whitespacesAndNewlines)) } ?? 0
        if cursor >= Self.maximumSeq {
            logger.warning(
                "durable outbox: \(directory)/cursor holds \(cursor), beyond any seq this log writes (a corrupt file): ignored, so unacknowledged messages may be sent twice"
            )
            cursor = 0
        }
        cursorWritten = cursor
        try recover()
    }

    deinit { storage.closeFiles() }

    // MARK: Opening

    private func recover() throws(Failure) {
        var lastSeq: UInt64 = 0
        var readSet = false
        for name in storage.segmentNames() {
            guard let data = storage.contents(of: name) else { continue }
            var segment = Segment(name: name, firstSeq: 0, lastSeq: 0, count: 0, bytes: 0, lastTimeMillis: 0)
            var firstUnacknowledgedOffset: Int?
            let valid = data.withUnsafeBytes { raw -> Int in
                var offset = 0
                while let record = Self.parseHeader(raw, at: offset), record.seq > lastSeq {
                    if segment.count == 0 { segment.firstSeq = record.seq }
                    segment.lastSeq = record.seq
                    segment.count += 1
                    segment.lastTimeMillis = record.timeMillis
                    if record.seq > cursor && firstUnacknowledgedOffset == nil { firstUnacknowledgedOffset = offset }
                    lastSeq = record.seq
                    offset += record.size
                }
                return offset
            }
            if valid < data.count {
                storage.truncate(name, to: valid)
                counters.truncatedBytes += UInt64(data.count - valid)
                logger.warning(
                    "durable outbox: \(name) has a torn or corrupt record at byte \(valid); cut off \(data.count - valid) bytes (the messages in them are lost)"
                )
            }
            segment.bytes = valid
            if segment.count == 0 || segment.lastSeq <= cursor {
                storage.remove(name)
                continue
            }
            segments.append(segment)
            if !readSet, let offset = firstUnacknowledgedOffset {
                readIndex = segments.count - 1
                readOffset = offset
                readSet = true
            }
        }
        nextSeq = max(cursor, lastSeq) + 1
        handedSeq = cursor
        if !readSet { readIndex = segments.count }
        if let last = segments.last {
            do {
                try storage.beginAppending(to: last.name, existing: true)
            } catch {
                throw Failure(description: error.description)
            }
            appending = true
        }
        let pending = nextSeq - 1 - cursor
        if pending > 0 {
            logger.notice(
                "durable outbox: \(pending) unacknowledged messages from before the restart will be sent first"
            )
        }
    }

    private struct Header {
        var seq: UInt64
        var timeMillis: UInt64
        var size: Int
    }

    /// The record at `offset` when it is whole and its CRC matches; nil at the end or at a torn or corrupt one.
    private static func parseHeader(_ raw: UnsafeRawBufferPointer, at offset: Int) -> Header? {
        guard raw.count - offset >= headerBytes + fixedBodyBytes else { return nil }
        let length = Int(raw.loadUnaligned(fromByteOffset: offset, as: UInt32.self).littleEndian)
        let crc = raw.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self).littleEndian
        guard length >= fixedBodyBytes, raw.count - offset - headerBytes >= length else { return nil }
        let body = UnsafeRawBufferPointer(rebasing: raw[(offset + headerBytes)..<(offset + headerBytes + length)])
        guard CRC32.checksum(body) == crc else { return nil }
        let topicLength = Int(body.loadUnaligned(fromByteOffset: 18, as: UInt16.self).littleEndian)
        guard fixedBodyBytes + topicLength <= length else { return nil }
        let seq = body.loadUnaligned(fromByteOffset: 0, as: UInt64.self).littleEndian
        guard seq >= 1, seq < maximumSeq else { return nil }
        return Header(
            seq: seq,
            timeMillis: body.loadUnaligned(fromByteOffset: 8, as: UInt64.self).littleEndian,
            size: headerBytes + length
        )
    }

    // MARK: Writing

    /// Why a message can never enter the log, or nil when it can: MQTT topic names are non-empty UTF-8 of at
    /// most 65535 bytes without wildcards or NUL (MQTT 5 §4.7.3, §1.5.4); payloads are bounded so a record
    /// fits in a segment.
    package static func problem(topic: String, payloadCount: Int) -> String? {
        if let problem = TopicScheme.publishingProblem(topic) { return "the topic " + problem }
        if payloadCount > maxPayloadBytes { return "the payload is \(payloadCount) bytes, over the 1 MiB limit" }
        return nil
    }

    /// Appends one message; returns its seq. Drops the oldest segments past `maxBytes`.
    @discardableResult
    package func append(
        topic: String,
        qos: Int,
        retain: Bool,
        payload: UnsafeRawBufferPointer,
        nowMillis: UInt64
    ) throws(Failure) -> UInt64 {
        lock.lock()
        defer { lock.unlock() }
        // A step seen before this record is written belongs to the records before it.
        noteStepLocked(now: nowMillis)
        if let problem = Self.problem(topic: topic, payloadCount: payload.count) {
            counters.rejected += 1
            throw Failure(description: "\(problem): the message was refused")
        }
        let topicBytes = Array(topic.utf8)
        let bodyLength = Self.fixedBodyBytes + topicBytes.count + payload.count
        let size = Self.headerBytes + bodyLength
        if segments.isEmpty || !appending
            || (segments[segments.count - 1].bytes + size > segmentBytes && segments[segments.count - 1].count > 0)
        {
            do throws(Failure) {
                try roll()
            } catch {
                counters.dropped += 1
                counters.droppedNoSpace += 1
                reportStorageProblem(error.description)
                throw error
            }
        }
        guard makeRoom(for: size) else {
            counters.dropped += 1
            counters.droppedNoSpace += 1
            reportStorageProblem(fullProblem())
            throw Failure(description: fullProblem())
        }
        let seq = nextSeq
        writeBuffer.removeAll(keepingCapacity: true)
        writeBuffer.reserveCapacity(size)
        func put<T: FixedWidthInteger>(_ value: T) {
            withUnsafeBytes(of: value.littleEndian) { writeBuffer.append(contentsOf: $0) }
        }
        put(UInt32(bodyLength))
        put(UInt32(0))
        put(seq)
        put(nowMillis)
        put(UInt8(qos))
        put(UInt8(retain ? 1 : 0))
        put(UInt16(topicBytes.count))
        writeBuffer.append(contentsOf: topicBytes)
        writeBuffer.append(contentsOf: payload)
        let crc = writeBuffer.withUnsafeBytes {
            CRC32.checksum(UnsafeRawBufferPointer(rebasing: $0[Self.headerBytes...]))
        }
        writeBuffer.withUnsafeMutableBytes { $0.storeBytes(of: crc.littleEndian, toByteOffset: 4, as: UInt32.self) }
        let length = segments[segments.count - 1].bytes
        var outcome = writeBuffer.withUnsafeBytes { storage.append($0, length: length) }
        if outcome == .noSpace {
            // Another writer filled the file system under the estimate: measure again and retry once.
            freeEstimate = 0
            if makeRoom(for: size) {
                outcome = writeBuffer.withUnsafeBytes { storage.append($0, length: length) }
            }
        }
        switch outcome {
        case .written:
            break
        case .noSpace:
            counters.dropped += 1
            counters.droppedNoSpace += 1
            reportStorageProblem(fullProblem())
            throw Failure(description: fullProblem())
        case .failed(let reason):
            counters.dropped += 1
            counters.droppedNoSpace += 1
            let problem =
                "cannot write to \(directory)/\(segments[segments.count - 1].name): \(reason) — durable messages are dropped (counted in durableDropped) until a write succeeds; check the state directory's file system (agent.state_dir)"
            reportStorageProblem(problem)
            throw Failure(description: problem)
        }
        freeEstimate -= size
        if counters.storageProblem != nil && hasSpareRoom() {
            logger.notice(
                "durable outbox: \(directory) has room again: durable logging resumed (\(counters.droppedNoSpace) messages could not be written while it was full)"
            )
            counters.storageProblem = nil
        }
        var last = segments[segments.count - 1]
        if last.count == 0 { last.firstSeq = seq }
        last.lastSeq = seq
        last.count += 1
        last.bytes += size
        last.lastTimeMillis = nowMillis
        segments[segments.count - 1] = last
        nextSeq += 1
        counters.appended += 1
        while totalBytes > maxBytes && segments.count > 1 {
            dropOldestSegment()
        }
        return seq
    }

    private var totalBytes: Int { segments.reduce(0) { $0 + $1.bytes } }

    /// The free bytes of the log's file system now, or `Int.max` when they cannot be read.
    private func measureFreeBytes() -> Int { storage.freeBytes() }

    /// Whether `size` more bytes leave `reservedFreeBytes` free, measuring when the estimate says no and every
    /// 256 appends (other writers share the file system); when they do not, drops the oldest segments (as
    /// `maxBytes` does) until they do or only the segment being written is left.
    private func makeRoom(for size: Int) -> Bool {
        appendsSinceSpaceCheck += 1
        if appendsSinceSpaceCheck >= 256 || freeEstimate - size < Self.reservedFreeBytes {
            appendsSinceSpaceCheck = 0
            freeEstimate = measureFreeBytes()
        }
        while freeEstimate - size < Self.reservedFreeBytes {
            guard segments.count > 1 else { return false }
            reportStorageProblem(fullProblem())
            dropOldestSegment()
            freeEstimate = measureFreeBytes()
        }
        return true
    }

    /// Room for a segment more than the reserve: the point at which a full file system counts as recovered.
    private func hasSpareRoom() -> Bool {
        if freeEstimate < Self.reservedFreeBytes + segmentBytes { freeEstimate = measureFreeBytes() }
        return freeEstimate >= Self.reservedFreeBytes + min(segmentBytes, Self.reservedFreeBytes)
    }

    private func fullProblem() -> String {
        "the file system of \(directory) is full (\(max(0, freeEstimate == .max ? 0 : freeEstimate) >> 10) KiB free, \(Self.reservedFreeBytes >> 10) KiB kept for the agent's state files): the durable outbox drops its oldest messages, then new ones (\(counters.droppedNoSpace) not written so far, all counted in durableDropped) and resumes by itself when space returns — free space there, give agent.state_dir a larger file system, or lower outbox.max_bytes below the free space"
    }

    /// Logs a storage problem when it starts or changes kind (not once per message).
    private func reportStorageProblem(_ problem: String) {
        let kind = problem.prefix(40)
        if counters.storageProblem?.prefix(40) != kind { logger.error("durable outbox: \(problem)") }
        counters.storageProblem = problem
    }

    private func roll() throws(Failure) {
        let name = String(format: "%020llu.log", nextSeq)
        appending = false
        do {
            try storage.beginAppending(to: name, existing: false)
        } catch {
            throw Failure(description: error.description)
        }
        appending = true
        segments.append(Segment(name: name, firstSeq: nextSeq, lastSeq: 0, count: 0, bytes: 0, lastTimeMillis: 0))
    }

    /// Removes the oldest segment, counting its unacknowledged records as dropped.
    private func dropOldestSegment() {
        let segment = segments.removeFirst()
        if segment.count > 0 && segment.lastSeq > cursor {
            // Records already handed to the client are not lost: libmosquitto holds them until the broker
            // acknowledges (and resends them on a reconnect). Only those never handed over are dropped; the
            // handed ones are remembered so their late acknowledgement still counts.
            var lost: UInt64 = 0
            var seq = max(segment.firstSeq, cursor + 1)
            while seq <= segment.lastSeq {
                if !acked.contains(seq) {
                    if seq <= handedSeq && orphaned.count < Self.maximumOrphaned {
                        orphaned.insert(seq)
                    } else {
                        lost += 1
                    }
                }
                seq += 1
            }
            counters.dropped += lost
            cursor = segment.lastSeq
            acked = acked.filter { $0 > cursor }
            advanceCursor()
        }
        handedSeq = max(handedSeq, segment.lastSeq)
        storage.remove(segment.name)
        peeked = nil
        if readIndex == 0 {
            readOffset = 0
        } else {
            readIndex -= 1
        }
    }

    // MARK: Reading

    /// The next record not yet handed to the client, in seq order; records past `maxAgeSeconds` are dropped
    /// (and counted) on the way. Call `markPublished` once the client took it.
    package func next(nowMillis: UInt64) -> Record? {
        lock.lock()
        defer { lock.unlock() }
        while readIndex < segments.count {
            let segment = segments[readIndex]
            guard readOffset < segment.bytes else {
                if readIndex == segments.count - 1 { return nil }
                readIndex += 1
                readOffset = 0
                continue
            }
            guard let (read, size) = readRecord(segment.name, at: readOffset) else {
                // Unreadable now (the file changed under us): skip the rest of this segment.
                logger.error(
                    "durable outbox: cannot read \(directory)/\(segment.name) at byte \(readOffset); skipping the rest of it"
                )
                readOffset = segment.bytes
                continue
            }
            var record = read
            record.timeMillis = correctedTime(record.timeMillis, seq: record.seq, now: nowMillis)
            if isExpired(record.timeMillis, now: nowMillis) {
                counters.dropped += 1
                readOffset += size
                handedSeq = record.seq
                acknowledgeLocked(record.seq, counted: false)
                continue
            }
            peeked = (readIndex, readOffset, record.seq, size)
            return record
        }
        return nil
    }

    /// The record `next` returned went to the client.
    package func markPublished(_ seq: UInt64) {
        lock.lock()
        defer { lock.unlock() }
        guard passPeekedLocked(seq) else { return }
        counters.published += 1
    }

    /// Moves the read position past the record `next` returned, if it is `seq` and still at that position
    /// (a drop may have moved it); false when it is not.
    private func passPeekedLocked(_ seq: UInt64) -> Bool {
        guard readIndex < segments.count, seq > handedSeq else { return false }
        guard let peeked, peeked.index == readIndex, peeked.offset == readOffset, peeked.seq == seq else {
            return false
        }
        readOffset += peeked.size
        handedSeq = seq
        self.peeked = nil
        return true
    }

    /// The record `next` returned is older than its stream's expiry: it goes unsent, like a record past
    /// `maxAgeSeconds`, counted in `dropped` and `expired`.
    package func discardExpired(_ seq: UInt64) {
        lock.lock()
        defer { lock.unlock() }
        guard passPeekedLocked(seq) else { return }
        counters.dropped += 1
        counters.expired += 1
        acknowledgeLocked(seq, counted: false)
    }

    /// What is left of the expiry of a record written at `timeMillis`, whole seconds rounded up (0 when
    /// `expirySeconds` is 0: it never expires), or nil when it has expired. A record whose age is unknown
    /// (either wall time before 2020: an unsynchronized clock) keeps its whole expiry, as the age bound
    /// spares it.
    package static func remainingExpiry(
        ofRecordAt timeMillis: UInt64,
        expirySeconds: UInt32,
        nowMillis: UInt64
    ) -> UInt32? {
        guard expirySeconds > 0 else { return 0 }
        guard timeMillis >= plausibleWallTimeMillis, nowMillis >= plausibleWallTimeMillis else { return expirySeconds }
        let waited = nowMillis >= timeMillis ? nowMillis - timeMillis : 0
        let expiry = UInt64(expirySeconds) * 1000
        guard waited < expiry else { return nil }
        return UInt32((expiry - waited + 999) / 1000)
    }

    private func readRecord(_ segment: String, at offset: Int) -> (Record, Int)? {
        var header = (UInt32(0), UInt32(0))
        let got = withUnsafeMutableBytes(of: &header) { storage.read(segment, at: offset, into: $0) }
        guard got == 8 else { return nil }
        let length = Int(UInt32(littleEndian: header.0))
        guard length >= Self.fixedBodyBytes, length <= Self.maxSegmentBytes else { return nil }
        var body = [UInt8](repeating: 0, count: length)
        let bodyGot = body.withUnsafeMutableBytes { storage.read(segment, at: offset + 8, into: $0) }
        guard bodyGot == length else { return nil }
        return body.withUnsafeBytes { raw -> (Record, Int)? in
            guard CRC32.checksum(raw) == UInt32(littleEndian: header.1) else { return nil }
            let topicLength = Int(raw.loadUnaligned(fromByteOffset: 18, as: UInt16.self).littleEndian)
            guard Self.fixedBodyBytes + topicLength <= length else { return nil }
            let topicStart = Self.fixedBodyBytes
            let record = Record(
                seq: raw.loadUnaligned(fromByteOffset: 0, as: UInt64.self).littleEndian,
                timeMillis: raw.loadUnaligned(fromByteOffset: 8, as: UInt64.self).littleEndian,
                qos: Int(raw[16]),
                retain: raw[17] != 0,
                topic: String(decoding: raw[topicStart..<(topicStart + topicLength)], as: UTF8.self),
                payload: Array(raw[(topicStart + topicLength)...])
            )
            return (record, Self.headerBytes + length)
        }
    }

    // MARK: Acknowledgements

    /// A record's stamp as the wall clock reads now: moved by every step seen since it was written.
    private func correctedTime(_ timeMillis: UInt64, seq: UInt64, now: UInt64) -> UInt64 {
        noteStepLocked(now: now)
        var time = Int64(clamping: timeMillis)
        for step in steps where seq <= step.throughSeq { time += step.deltaMillis }
        return UInt64(clamping: max(0, time))
    }

    /// Compares the wall clock with the monotonic one; a step is remembered against every record written so far.
    private func noteStepLocked(now: UInt64) {
        guard let monotonicMillis else { return }
        let offset = Int64(clamping: now) - monotonicMillis()
        guard let reference = wallMinusMonotonic else {
            wallMinusMonotonic = offset
            return
        }
        let delta = offset - reference
        guard abs(delta) > Self.stepThresholdMillis else { return }
        wallMinusMonotonic = offset
        guard nextSeq > 1 else { return }
        steps.append((nextSeq - 1, delta))
        logger.notice(
            "durable outbox: the wall clock stepped \(delta / 1000) s; the ages of the \(counters.depth > 0 ? "records kept" : "records") are measured from their corrected times"
        )
        // Steps older than every record kept no longer matter.
        let oldest = segments.first?.firstSeq ?? nextSeq
        steps.removeAll { $0.throughSeq < oldest }
    }

    private func isExpired(_ timeMillis: UInt64, now: UInt64) -> Bool {
        timeMillis >= Self.plausibleWallTimeMillis && now >= Self.plausibleWallTimeMillis
            && Double(now) - Double(timeMillis) > maxAgeSeconds * 1000
    }

    /// The broker acknowledged `seq`: the cursor advances over the contiguous acknowledged prefix.
    package func acknowledge(_ seq: UInt64) {
        lock.lock()
        defer { lock.unlock() }
        acknowledgeLocked(seq, counted: true)
    }

    /// The broker acknowledged these seqs (any order): one lock for the lot.
    package func acknowledge(contentsOf seqs: some Sequence<UInt64>) {
        lock.lock()
        defer { lock.unlock() }
        for seq in seqs { acknowledgeLocked(seq, counted: true) }
    }

    private func acknowledgeLocked(_ seq: UInt64, counted: Bool) {
        if seq <= cursor {
            if orphaned.remove(seq) != nil && counted { counters.acknowledged += 1 }
            return
        }
        guard seq < nextSeq, !acked.contains(seq) else { return }
        if counted { counters.acknowledged += 1 }
        acked.insert(seq)
        advanceCursor()
    }

    private func advanceCursor() {
        while acked.remove(cursor + 1) != nil { cursor += 1 }
    }

    /// Periodic upkeep (the writer thread calls it about every 100 ms): deletes fully acknowledged segments,
    /// drops segments past the age bound, and writes the cursor when it moved.
    package func maintain(nowMillis: UInt64) {
        lock.lock()
        defer { lock.unlock() }
        while segments.count > 1 {
            let oldest = segments[0]
            let expired = isExpired(
                correctedTime(oldest.lastTimeMillis, seq: oldest.lastSeq, now: nowMillis),
                now: nowMillis
            )
            guard oldest.lastSeq <= cursor || expired else { break }
            dropOldestSegment()
        }
        writeCursorLocked()
    }

    /// Whether `maintain` has anything to do: a cursor not yet written, or an older segment that may go.
    package var needsMaintenance: Bool {
        lock.lock()
        defer { lock.unlock() }
        return cursor != cursorWritten || segments.count > 1
    }

    /// Writes the cursor and closes the files (at shutdown).
    package func close() {
        lock.lock()
        defer { lock.unlock() }
        cursorWritten = .max
        writeCursorLocked()
        storage.closeFiles()
        appending = false
    }

    private func writeCursorLocked() {
        guard cursor != cursorWritten else { return }
        do {
            try storage.writeCursor("\(cursor)\n")
        } catch {
            cursorProblem("cannot replace \(directory)/cursor: \(error)")
            return
        }
        if cursorProblemLogged {
            cursorProblemLogged = false
            logger.notice("durable outbox: \(directory)/cursor is written again")
        }
        cursorWritten = cursor
    }

    /// The previous cursor stays in force, so a restart would only resend what it covers (at least once).
    private func cursorProblem(_ message: String) {
        guard !cursorProblemLogged else { return }
        cursorProblemLogged = true
        logger.error(
            "durable outbox: \(message) — the previous cursor stays, so after a restart acknowledged messages may be sent again; retrying every 100 ms"
        )
    }

    package var snapshot: Counters {
        lock.lock()
        defer { lock.unlock() }
        var c = counters
        let last = nextSeq - 1
        c.cursor = cursor
        // Records handed to the client whose segment went are still awaiting their acknowledgement.
        c.depth = Int(last - cursor) - acked.count + orphaned.count
        c.backlog = Int(last - max(handedSeq, cursor))
        c.bytes = totalBytes
        c.segments = segments.count
        return c
    }
}
