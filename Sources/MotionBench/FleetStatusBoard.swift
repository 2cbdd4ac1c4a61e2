import Foundation
import Harness

/// Each device's latest status as the fleet bench's subscriber heard it, read incrementally: every status is
/// decoded once, however often the bench asks (at 2000 agents, re-decoding all statuses every 50 ms cost the bench
/// a share of the cores the agents were being measured on).
final class FleetStatusBoard {
    struct State: Equatable {
        var online: Bool
        /// The fleet layer's version in force (0: none).
        var fleet: Int
    }

    private let subscriber: CapturingSubscriber
    private var cursor = 0
    private(set) var latest: [String: State] = [:]
    /// Devices seen online for the first time since the last `newlyOnline()`.
    private var pendingOnline: [String] = []
    private var everOnline = Set<String>()

    init(_ subscriber: CapturingSubscriber) { self.subscriber = subscriber }

    /// Reads what arrived since the last call.
    func update() {
        let messages = subscriber.messages
        guard cursor < messages.count else { return }
        for message in messages[cursor...] {
            guard let (device, state) = Self.state(message.payload) else { continue }
            latest[device] = state
            if state.online, everOnline.insert(device).inserted { pendingOnline.append(device) }
        }
        cursor = messages.count
    }

    /// The devices whose first online status arrived since the previous call (after `update()`).
    func newlyOnline() -> [String] {
        defer { pendingOnline.removeAll(keepingCapacity: true) }
        return pendingOnline
    }

    /// Devices whose latest status is online with the fleet layer at `version` or newer (0: any).
    func onlineCount(version: Int) -> Int {
        update()
        return latest.values.reduce(0) { $0 + ($1.online && $1.fleet >= version ? 1 : 0) }
    }

    func devices(version: Int) -> Set<String> {
        update()
        return Set(latest.compactMap { $0.value.online && $0.value.fleet >= version ? $0.key : nil })
    }

    /// What the bench reads from a status: whose it is, whether online, and the fleet version in force.
    static func state(_ payload: [UInt8]) -> (device: String, state: State)? {
        guard let object = try? JSONSerialization.jsonObject(with: Data(payload)) as? [String: Any],
            let device = object["device"] as? String
        else { return nil }
        let desired = (object["configuration"] as? [String: Any])?["desired"] as? [String: Int]
        return (device, State(online: object["state"] as? String == "online", fleet: desired?["fleet"] ?? 0))
    }
}
