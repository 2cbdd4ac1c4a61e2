/// Messages handed to libmosquitto that it has not yet reported through on_publish: QoS > 0 messages
/// awaiting PUBACK/PUBCOMP (by message id) and QoS 0 messages not yet written to the socket (by count).
///
/// libmosquitto 2.0.11 queues both without any bound and has no public call to ask how many are waiting,
/// so the client keeps this ledger to bound the queue (`publish` refuses past the limit) and to know when a
/// `disconnect` has flushed. Message ids are 16-bit and handed out in sequence, so a bit per id says whether
/// an on_publish id was a QoS > 0 message (clear its bit) or a QoS 0 one (decrement the count). With both
/// kinds bounded well below 65535 the ids in flight are distinct.
struct OutstandingMessages {
    /// One bit per message id 0…65535: 1024 words, 8 KiB, allocated once per client.
    private var acknowledgementBits = [UInt64](repeating: 0, count: 1024)
    private(set) var awaitingAcknowledgement = 0
    private(set) var unwrittenQoS0 = 0

    var isEmpty: Bool { awaitingAcknowledgement == 0 && unwrittenQoS0 == 0 }

    mutating func addQoS0() {
        unwrittenQoS0 += 1
    }

    mutating func addAwaitingAcknowledgement(_ messageID: Int32) {
        let (word, mask) = Self.position(messageID)
        if acknowledgementBits[word] & mask == 0 {
            acknowledgementBits[word] |= mask
            awaitingAcknowledgement += 1
        }
    }

    /// on_publish reported `messageID`. Returns whether it acknowledged a QoS > 0 message (rather than a QoS 0
    /// one being written).
    @discardableResult
    mutating func complete(_ messageID: Int32) -> Bool {
        let (word, mask) = Self.position(messageID)
        if acknowledgementBits[word] & mask != 0 {
            acknowledgementBits[word] &= ~mask
            awaitingAcknowledgement -= 1
            return true
        } else if unwrittenQoS0 > 0 {
            unwrittenQoS0 -= 1
        }
        return false
    }

    /// A new connection starts: libmosquitto drops unwritten packets on (re)connect (packet__cleanup_all in
    /// mosquitto__reconnect), so QoS 0 messages never complete; QoS > 0 messages stay queued and are resent.
    mutating func connectionStarted() {
        unwrittenQoS0 = 0
    }

    /// A new libmosquitto handle: everything the old one held is gone.
    mutating func removeAll() {
        for index in acknowledgementBits.indices { acknowledgementBits[index] = 0 }
        awaitingAcknowledgement = 0
        unwrittenQoS0 = 0
    }

    private static func position(_ messageID: Int32) -> (word: Int, mask: UInt64) {
        let id = Int(UInt16(truncatingIfNeeded: messageID))
        return (id >> 6, 1 << UInt64(id & 63))
    }
}
