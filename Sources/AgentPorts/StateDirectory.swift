/// The agent's state directory (`agent.state_dir`): everything it keeps between runs. `StateFile` is its layout,
/// in one place; the implementation (Platform's `StateFiles`) owns the I/O discipline — a file is replaced
/// atomically and durably (a fresh temporary file, fsync, rename, fsync of the directory) and never through a
/// symbolic link or a name another user could have prepared, and reads are bounded.
package protocol StateDirectory: Sendable {
    /// The directory, for messages.
    var path: String { get }
    /// A kept file's bytes; nil when there is none. Throws when it exists but cannot be read, or is larger
    /// than any file the agent writes there (`StateFile.maximumBytes`).
    func read(_ file: StateFile) throws(StateFileError) -> [UInt8]?
    /// Replaces a kept file, atomically and durably; a failure leaves the previous content.
    func replace(_ file: StateFile, with bytes: [UInt8]) throws(StateFileError)
    /// Removes a kept file; removing one that is not there is no error.
    func remove(_ file: StateFile) throws(StateFileError)
    /// The absolute path of a file: for messages, and for the files whose owners manage them themselves
    /// (the history's SQLite database).
    func location(of file: StateFile) -> String
    /// The durable outbox's segment folder (`StateFile.durableOutbox`), created when missing.
    func segmentStorage() throws(StateFileError) -> any SegmentStorage
}

/// One file (or folder) of the state directory, by what it holds.
package struct StateFile: Sendable, Hashable, CustomStringConvertible {
    /// Its path under the state directory.
    package let relativePath: String

    private init(_ relativePath: String) { self.relativePath = relativePath }

    package var description: String { relativePath }

    /// How many times the agent started with this directory (decimal text).
    package static let bootCount = StateFile("boot-count")
    /// The connection's state for tools on the device (`HealthDocument`).
    package static let health = StateFile("health.json")
    /// The device-motion estimator's learned state: gyroscope bias, magnetometer calibration.
    package static let estimatorState = StateFile("device-motion.json")
    /// When the reference attitude in force was set.
    package static let referenceAttitude = StateFile("reference-attitude.json")
    /// The fall reported and not yet resolved, as published (`PendingFallStore`).
    package static let pendingFall = StateFile("pending-fall.json")
    /// The Home Assistant discovery topics last published, so switching discovery off removes them.
    package static let homeAssistantDiscovery = StateFile("home-assistant-discovery")
    /// A layer's desired document as received (`fleet`, `device`, `group-<name>`).
    package static func desiredDocument(_ layer: String) -> StateFile { StateFile("desired/\(layer).json") }
    /// The command overrides per key, with their id and time.
    package static let commandOverrides = StateFile("desired/overrides.json")
    /// Round one's stream settings, migrated once into command overrides.
    package static let legacyStreams = StateFile("streams.json")
    /// What `legacyStreams` becomes once migrated.
    package static let migratedLegacyStreams = StateFile("streams.json.migrated")
    /// The highest counters of signed commands seen per operator key, so a replay is refused after a restart.
    package static let commandCounters = StateFile("command-counters.json")
    /// The step and activity history (SQLite, managed by MotionHistory).
    package static let history = StateFile("history.sqlite")
    /// The Sparkplug edge node's bdSeq of its last CONNECT (decimal text), written before that CONNECT, so the
    /// next start's NBIRTH does not repeat the one its NDEATH will closed.
    package static let sparkplugBirthDeathSequence = StateFile("sparkplug-bdseq")
    /// The durable outbox's folder: segments and the acknowledgement cursor (`SegmentStorage`).
    package static let durableOutbox = StateFile("outbox")

    /// The largest file the agent writes in the state directory: a desired document or the overrides are a few
    /// KiB; 1 MiB bounds what a corrupt or planted file can make the agent read.
    package static let maximumBytes = 1 << 20
}

/// Why a state file could not be read or written: the operation, the file, the system's reason and the fix.
package struct StateFileError: Error, Sendable, CustomStringConvertible {
    package var description: String
    /// The file system is full (or the quota reached).
    package var isNoSpace: Bool

    package init(_ description: String, isNoSpace: Bool = false) {
        self.description = description
        self.isNoSpace = isNoSpace
    }
}

/// The durable outbox's files: append-only segments and the acknowledgement cursor, in one folder of the
/// state directory. The log (AgentPipeline's `DurableLog`) decides what to write; this is how bytes reach the
/// disk. Used under the log's lock only.
package protocol SegmentStorage: AnyObject {
    /// The folder, for messages.
    var folder: String { get }
    /// The segment files' names (`*.log`), sorted.
    func segmentNames() -> [String]
    /// A whole segment, read at open to find its records; nil when it cannot be read.
    func contents(of segment: String) -> [UInt8]?
    /// Cuts a segment to `bytes` (a torn or corrupt tail).
    func truncate(_ segment: String, to bytes: Int)
    /// Deletes a segment.
    func remove(_ segment: String)
    /// Makes `segment` the one appended to: a new, empty file, or (`existing`) the last one found at open.
    func beginAppending(to segment: String, existing: Bool) throws(StateFileError)
    /// Appends one record to the current segment with one write; on a partial write the segment is cut back to
    /// `length` (its length before), so no torn record hides the later ones.
    func append(_ bytes: UnsafeRawBufferPointer, length: Int) -> SegmentAppendOutcome
    /// Free bytes of the folder's file system for an unprivileged writer, or `Int.max` when unknown.
    func freeBytes() -> Int
    /// Reads `buffer.count` bytes of `segment` at `offset`; returns how many were read.
    func read(_ segment: String, at offset: Int, into buffer: UnsafeMutableRawBufferPointer) -> Int
    /// The acknowledgement cursor's text as kept; nil when there is none.
    func readCursor() -> String?
    /// Replaces the cursor, atomically and durably.
    func writeCursor(_ text: String) throws(StateFileError)
    /// Closes the open files (they reopen on the next use).
    func closeFiles()
}

/// What became of one append.
package enum SegmentAppendOutcome: Sendable, Equatable {
    case written
    /// The file system is full (or the quota reached, or a short write): nothing was kept.
    case noSpace
    /// Another failure, with the system's reason: nothing was kept.
    case failed(String)
}
