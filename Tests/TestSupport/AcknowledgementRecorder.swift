import AgentPorts
import Synchronization

/// Records the message ids a client's network thread reports acknowledged, in order, for tests that wait
/// on PUBACKs. Install it with `client.setAcknowledgementHandler(recorder)` and keep it alive (the client
/// holds it weakly).
package final class AcknowledgementRecorder: BrokerAcknowledgementHandler {
    private let recorded = Mutex<[Int32]>([])

    package init() {}

    package func brokerAcknowledged(_ messageIDs: ArraySlice<Int32>) {
        recorded.withLock { $0.append(contentsOf: messageIDs) }
    }

    /// Every acknowledged id so far, in the order the broker acknowledged them.
    package var acknowledged: [Int32] { recorded.withLock { $0 } }

    package func contains(_ messageID: Int32) -> Bool { recorded.withLock { $0.contains(messageID) } }
}
