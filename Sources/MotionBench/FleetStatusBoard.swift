import AgentPorts
import Foundation
import Harness
import MotionWire

/// Each device's latest status as the fleet bench's subscribers heard it (one per broker node), read
/// incrementally: every status is decoded once, however often the bench asks (at 2000 agents, re-decoding all
/// statuses every 50 ms cost the bench a share of the cores the agents were being measured on).
final class FleetStatusBoard {
    struct State: Equatable {
        var online: Bool
        /// The fleet layer's version in force (0: none).
        var fleet: Int
        /// The node the device publishes through (`host:port`), when its status says.
        var server: String?
    }

    private let subscribers: [CapturingSubscriber]
    private var cursors: [Int]
    /// Per subscriber, how many statuses of each device it has heard.
    private var heard: [[String: Int]]
    /// Per device, the most statuses any one subscriber has heard of it.
    private var newest: [String: Int] = [:]
    private(set) var latest: [String: State] = [:]
    /// Devices seen online for the first time since the last `newlyOnline()`.
    private var pendingOnline: [String] = []
    private var everOnline = Set<String>()

    init(_ subscribers: [CapturingSubscriber]) {
        self.subscribers = subscribers
        cursors = Array(repeating: 0, count: subscribers.count)
        heard = Array(repeating: [:], count: subscribers.count)
    }

    /// Reads what arrived since the last call. Each node delivers a device's statuses in the order the device
    /// published them, some nodes later than others, so a device's latest status is the last one heard by the
    /// subscriber that has heard the most of them: a copy that one node delivers late never undoes a newer one.
    func update() {
        for (index, subscriber) in subscribers.enumerated() {
            let messages = subscriber.messages
            guard cursors[index] < messages.count else { continue }
            for message in messages[cursors[index]...] {
                guard let (device, state) = Self.state(message.payload) else { continue }
                let count = heard[index][device, default: 0] + 1
                heard[index][device] = count
                if count > newest[device, default: 0] {
                    newest[device] = count
                    latest[device] = state
                }
                if state.online, everOnline.insert(device).inserted { pendingOnline.append(device) }
            }
            cursors[index] = messages.count
        }
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

    /// How many devices each subscriber (node) has heard from: on a cluster, every node should hear every device.
    var devicesHeardPerSubscriber: [Int] {
        update()
        return heard.map(\.count)
    }

    /// Messages received by any subscriber in [`start`, `end`) (CLOCK_MONOTONIC ns), in order of receipt: a
    /// status or document that several nodes delivered appears once per node, its first copy first.
    func arrivals(from start: UInt64, to end: UInt64) -> [CapturingSubscriber.Arrival] {
        guard subscribers.count > 1 else { return subscribers.first?.arrivals(from: start, to: end) ?? [] }
        return subscribers.flatMap { $0.arrivals(from: start, to: end) }.sorted {
            $0.receivedNanoseconds < $1.receivedNanoseconds
        }
    }

    /// Every subscriber's messages so far (several copies of what several nodes delivered).
    var messages: [InboundMessage] { subscribers.flatMap(\.messages) }

    /// Messages the subscribers dropped because the bench fell behind.
    var droppedCount: Int { subscribers.reduce(0) { $0 + $1.droppedCount } }

    func close() async {
        for subscriber in subscribers { await subscriber.close() }
    }

    /// What the bench reads from a status: whose it is, whether online, the fleet version in force and the node.
    static func state(_ payload: [UInt8]) -> (device: String, state: State)? {
        guard let status = try? JSONDecoder().decode(AgentStatus.self, from: Data(payload)) else { return nil }
        return (
            status.device,
            State(
                online: status.state == .online,
                fleet: status.configuration?.desired["fleet"] ?? 0,
                server: status.broker?.server
            )
        )
    }
}
