import AgentPorts

extension MemoryBroker {
    /// The broker's configuration: mosquitto.conf's options that change what clients see.
    package struct Options: Sendable, Hashable {
        /// The port clients connect to (with the broker's name as the host).
        package var port: Int
        /// mosquitto's `max_queued_messages`: QoS 1 messages held per client beyond those in flight (online) or in
        /// all (offline); and, for a connected client, the packets waiting to be read beyond which QoS 0 messages
        /// are dropped. 0: no limit.
        package var maxQueuedMessages: Int
        /// QoS 1 messages in flight to one client at once (mosquitto's `max_inflight_messages`; libmosquitto's
        /// Receive Maximum is 20 too). 0: no limit.
        package var maxInflightMessages: Int
        /// Whether retained messages and persistent sessions survive `stop()` and `start()` (mosquitto's
        /// `persistence true`, stopped with SIGTERM).
        package var persistence: Bool
        /// user name → password; nil allows anonymous clients and takes any credentials.
        package var users: [String: String]?
        /// Seconds a packet takes for one hop; 0 moves every packet at the next pump.
        package var latencySeconds: Double

        package init(
            port: Int = 1883,
            maxQueuedMessages: Int = 1000,
            maxInflightMessages: Int = 20,
            persistence: Bool = false,
            users: [String: String]? = nil,
            latencySeconds: Double = 0
        ) {
            self.port = port
            self.maxQueuedMessages = maxQueuedMessages
            self.maxInflightMessages = maxInflightMessages
            self.persistence = persistence
            self.users = users
            self.latencySeconds = latencySeconds
        }
    }

    /// Messages the broker dropped for one client id, counted since the broker was made (restarts included).
    package struct Drops: Sendable, Hashable {
        /// Beyond `maxQueuedMessages`: QoS 1 with the window full and the queue full (or offline with the queue
        /// full), QoS 0 with that many packets waiting to be read.
        package var queueFull: Int
        /// Larger than the client's MQTT 5 Maximum Packet Size.
        package var oversize: Int
        /// Past their message expiry interval before they could be sent.
        package var expired: Int
        /// QoS 0 messages for a persistent session while its client was offline (MQTT queues only QoS > 0).
        package var offlineQoS0: Int

        package init(queueFull: Int = 0, oversize: Int = 0, expired: Int = 0, offlineQoS0: Int = 0) {
            self.queueFull = queueFull
            self.oversize = oversize
            self.expired = expired
            self.offlineQoS0 = offlineQoS0
        }

        package var total: Int { queueFull + oversize + expired + offlineQoS0 }
    }

    /// A retained message as the broker holds it.
    package struct RetainedMessage: Sendable, Hashable {
        package var topic: String
        package var payload: [UInt8]
        package var qos: Int
        package var responseTopic: String?
        package var correlationData: [UInt8]?
        /// When it expires, on the broker's clock; nil: never.
        package var expiresAt: Double?
    }

    /// A PUBLISH the broker took from a client, as it arrived (for invariants: the publisher's client id is not
    /// in what subscribers receive).
    package struct Publication: Sendable, Hashable {
        package var clientID: String
        package var topic: String
        package var payload: [UInt8]
        package var qos: Int
        package var retain: Bool
        package var duplicate: Bool
        package var responseTopic: String?
        package var correlationData: [UInt8]?
    }

    /// What the broker sent one client, as it left the broker (for invariants and tests: the port's
    /// `InboundMessage` has no message expiry).
    package struct Delivery: Sendable, Hashable {
        package var clientID: String
        package var topic: String
        package var payload: [UInt8]
        package var qos: Int
        package var retain: Bool
        package var duplicate: Bool
        /// The remaining MQTT 5 Message Expiry Interval it carried, seconds; nil: none (or MQTT 3.1.1).
        package var messageExpirySeconds: UInt32?
        package var responseTopic: String?
        package var correlationData: [UInt8]?
    }
}
