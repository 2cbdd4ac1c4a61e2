import AgentPorts

/// The `{root}/metrics` document: the agent's health at one moment. Counters count since the agent started;
/// `cpuPercent` is over the last interval.
public struct AgentMetrics: Sendable, Codable, Equatable {
    public struct Samples: Sendable, Codable, Equatable {
        /// Sensor readings the hub received.
        public var read: UInt64
        /// Readings dropped because a value was NaN or infinite.
        public var invalid: UInt64

        public init(read: UInt64, invalid: UInt64) {
            self.read = read
            self.invalid = invalid
        }
    }

    public struct Messages: Sendable, Codable, Equatable {
        /// Messages the streams handed to the outbox.
        public var enqueued: UInt64
        /// Messages the broker client accepted.
        public var published: UInt64
        /// Messages the client refused as invalid.
        public var failed: UInt64
        /// Messages refused by the outbox (larger than it, or for an unknown topic).
        public var rejected: UInt64
        /// Oldest messages dropped because the outbox was full (a broker outage longer than it holds).
        public var droppedOverflow: UInt64
        /// Messages dropped unsent because they waited longer than their stream's expiry_s (memory outbox).
        public var droppedExpired: UInt64?

        public init(
            enqueued: UInt64,
            published: UInt64,
            failed: UInt64,
            rejected: UInt64,
            droppedOverflow: UInt64,
            droppedExpired: UInt64?
        ) {
            self.enqueued = enqueued
            self.published = published
            self.failed = failed
            self.rejected = rejected
            self.droppedOverflow = droppedOverflow
            self.droppedExpired = droppedExpired
        }
    }

    public struct OutboxLevel: Sendable, Codable, Equatable {
        /// Messages waiting.
        public var depth: Int
        /// Bytes they hold.
        public var bytes: Int

        public init(depth: Int, bytes: Int) {
            self.depth = depth
            self.bytes = bytes
        }
    }

    public struct Connection: Sendable, Codable, Equatable {
        public var connected: Bool
        /// Connections after the first one.
        public var reconnects: UInt64
        /// Connection attempts that failed.
        public var failures: UInt64
        /// Inbound messages dropped because the agent could not keep up with them (a control-topic flood).
        public var inboundDropped: UInt64
        /// `host:port` of the broker in use (or tried next).
        public var server: String?
        /// Moves to the next server of `mqtt.servers`.
        public var failovers: UInt64?

        public init(
            connected: Bool,
            reconnects: UInt64,
            failures: UInt64,
            inboundDropped: UInt64,
            server: String?,
            failovers: UInt64?
        ) {
            self.connected = connected
            self.reconnects = reconnects
            self.failures = failures
            self.inboundDropped = inboundDropped
            self.server = server
            self.failovers = failovers
        }
    }

    public struct Process: Sendable, Codable, Equatable {
        /// CPU time over the last interval as a percentage of one core.
        public var cpuPercent: Double
        /// User + system CPU time since start, seconds.
        public var cpuSeconds: Double
        /// Resident memory (VmRSS), bytes.
        public var rssBytes: UInt64

        public init(cpuPercent: Double, cpuSeconds: Double, rssBytes: UInt64) {
            self.cpuPercent = cpuPercent
            self.cpuSeconds = cpuSeconds
            self.rssBytes = rssBytes
        }
    }

    /// The durable outbox (present when a stream is durable): what it holds and what it could not keep.
    public struct Durable: Sendable, Codable, Equatable {
        public var appended: UInt64
        public var acknowledged: UInt64
        /// Durable messages discarded unacknowledged (bounds, a full file system, a failed write): exact.
        public var dropped: UInt64
        /// Of `dropped`, those that never reached the disk (full file system, failed write).
        public var droppedNoSpace: UInt64
        /// Of `dropped`, those older than their stream's expiry_s when their turn came.
        public var expired: UInt64?
        public var depth: Int
        public var bytes: Int
        /// While the log cannot keep everything: what is full, what it does meanwhile, the fix.
        public var storageProblem: String?

        public init(
            appended: UInt64,
            acknowledged: UInt64,
            dropped: UInt64,
            droppedNoSpace: UInt64,
            expired: UInt64?,
            depth: Int,
            bytes: Int,
            storageProblem: String?
        ) {
            self.appended = appended
            self.acknowledged = acknowledged
            self.dropped = dropped
            self.droppedNoSpace = droppedNoSpace
            self.expired = expired
            self.depth = depth
            self.bytes = bytes
            self.storageProblem = storageProblem
        }
    }

    public var device: String
    public var agentVersion: String
    /// Unix time of the report, seconds.
    public var time: Double
    public var uptimeSeconds: Double
    public var bootCount: UInt64
    public var intervalSeconds: Int
    public var samples: Samples
    public var messages: Messages
    public var outbox: OutboxLevel
    public var connection: Connection
    public var process: Process
    /// Per sensor device (IIO), keyed by device id: samples, garbage dropped or clipped, read errors.
    public var devices: [String: SensorDeviceCounters]
    public var durable: Durable?

    public init(
        device: String,
        time: Double,
        uptimeSeconds: Double,
        bootCount: UInt64,
        intervalSeconds: Int,
        samples: Samples,
        messages: Messages,
        outbox: OutboxLevel,
        connection: Connection,
        process: Process,
        devices: [String: SensorDeviceCounters],
        durable: Durable?
    ) {
        self.device = device
        agentVersion = AgentVersion.version
        self.time = time
        self.uptimeSeconds = uptimeSeconds
        self.bootCount = bootCount
        self.intervalSeconds = intervalSeconds
        self.samples = samples
        self.messages = messages
        self.outbox = outbox
        self.connection = connection
        self.process = process
        self.devices = devices
        self.durable = durable
    }
}
