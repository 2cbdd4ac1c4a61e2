import AgentPorts

/// A message as the broker holds it: what a PUBLISH carried, with its expiry fixed on the broker's clock.
struct StoredMessage: Sendable {
    var topic: String
    var payload: [UInt8]
    var qos: Int
    var responseTopic: String?
    var correlationData: [UInt8]?
    /// When the MQTT 5 Message Expiry Interval runs out, on the network's clock; nil: never.
    var expiresAt: Double?
}

/// A PUBLISH as it travels on a wire, in either direction.
struct PublishPacket: Sendable {
    var topic: String
    var payload: [UInt8]
    var qos: Int
    var retain: Bool
    var messageID: Int32
    var duplicate: Bool
    var responseTopic: String?
    var correlationData: [UInt8]?
    /// The Message Expiry Interval it carries (MQTT 5 only), seconds.
    var expirySeconds: UInt32?
}

/// One MQTT packet on a wire. SUBACK and PINGREQ/PINGRESP are not modelled (nothing the port reports depends on
/// them).
enum PacketKind: Sendable {
    case connect
    /// `reasonCode` 0 accepts; the broker's Receive Maximum bounds the client's QoS > 0 window (MQTT 5).
    case connack(reasonCode: Int, sessionPresent: Bool, receiveMaximum: Int)
    case publish(PublishPacket)
    case puback(Int32)
    case subscribe([String], qos: Int)
    case disconnect
}

struct Packet: Sendable {
    var kind: PacketKind
    /// The pump during which (or after which) it was sent: a pump moves only packets sent before it began, so each
    /// packet moves exactly one hop per pump.
    var sentAfterPump: UInt64
    /// The earliest time it may arrive (`latencySeconds` after it was sent).
    var due: Double

    var isPublish: Bool {
        if case .publish = kind { return true }
        return false
    }
}

/// A first-in, first-out queue that pops from the front in O(1) (a wire, a session's queue).
struct FIFO<Element> {
    private var storage: [Element] = []
    private var head = 0

    var count: Int { storage.count - head }
    var isEmpty: Bool { head == storage.count }
    var first: Element? { head < storage.count ? storage[head] : nil }

    mutating func append(_ element: Element) {
        storage.append(element)
    }

    @discardableResult
    mutating func popFirst() -> Element? {
        guard head < storage.count else { return nil }
        let element = storage[head]
        head += 1
        if head == storage.count {
            storage.removeAll(keepingCapacity: true)
            head = 0
        } else if head >= 512 && head * 2 >= storage.count {
            storage.removeFirst(head)
            head = 0
        }
        return element
    }

    mutating func removeAll() {
        storage.removeAll()
        head = 0
    }

    /// The elements, oldest first.
    var elements: ArraySlice<Element> { storage[head...] }
}

extension FIFO: Sendable where Element: Sendable {}
