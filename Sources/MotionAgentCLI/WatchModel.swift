import AgentPorts
import Foundation
import MotionModel
import MotionWire

/// What `motion-agent watch` knows about a device: the latest values per stream, when messages came (for the
/// measured rates), and short histories for the sparklines. A value type fed by the subscriber task and read
/// by the drawing task under one lock.
struct WatchModel: Sendable {
    /// One stream's latest state.
    struct Stream: Sendable {
        /// The latest values, already formatted (`x=0.0123 y=…`).
        var summary = ""
        var messages = 0
        var samples = 0
        /// Arrival times (s, monotonic) of the samples in the last `rateWindow` seconds.
        var arrivals: [Double] = []
    }

    /// Rates are measured over this window, seconds.
    static let rateWindow = 2.0
    /// Sparkline points kept: `historyLength` ticks of ~0.2 s is the last ~12 s.
    static let historyLength = 60

    var topics: TopicScheme
    var root: String { topics.root }
    var streams: [String: Stream] = [:]
    var state = "unknown"
    var bootCount: Int?
    var agentVersion: String?
    var metrics = ""
    /// The latest acceleration magnitude (g) and attitude (degrees), sampled into the histories at each tick.
    var accelerationMagnitude: Double?
    var attitude: (roll: Double, pitch: Double, yaw: Double)?
    var magnitudeHistory: [Double] = []
    var rollHistory: [Double] = []
    var pitchHistory: [Double] = []
    var yawHistory: [Double] = []

    init(topics: TopicScheme) { self.topics = topics }

    /// One message of the device's topics, received at `now` (monotonic seconds).
    mutating func receive(topic: String, payload: [UInt8], now: Double) {
        guard let name = topics.path(of: topic) else { return }
        let subject = TopicScheme.Subject(path: name)
        switch subject {
        case .control?, .controlReply?: return
        case .status?:
            if let status = try? JSONDecoder().decode(AgentStatus.self, from: Data(payload)) {
                state = status.state.rawValue
                bootCount = Int(status.bootCount)
                agentVersion = status.agentVersion
            }
            return
        case .metrics?:
            if let report = try? JSONDecoder().decode(AgentMetrics.self, from: Data(payload)) {
                metrics = Self.describe(report)
            }
            return
        default:
            break
        }
        var stream = streams[name] ?? Stream()
        stream.messages += 1
        let (summary, count) = decode(subject.flatMap(PayloadKind.init(subject:)), payload: payload)
        if let summary { stream.summary = summary }
        stream.samples += count
        for _ in 0..<count { stream.arrivals.append(now) }
        streams[name] = stream
    }

    /// Prunes the rate windows and samples the sparkline histories.
    mutating func tick(now: Double) {
        for name in streams.keys {
            streams[name]!.arrivals.removeAll { $0 < now - Self.rateWindow }
        }
        func push(_ value: Double?, _ history: inout [Double]) {
            guard let value else { return }
            history.append(value)
            if history.count > Self.historyLength { history.removeFirst(history.count - Self.historyLength) }
        }
        push(accelerationMagnitude, &magnitudeHistory)
        push(attitude?.roll, &rollHistory)
        push(attitude?.pitch, &pitchHistory)
        push(attitude?.yaw, &yawHistory)
    }

    /// Samples per second over the last window.
    func rate(of stream: Stream, now: Double) -> Double {
        Double(stream.arrivals.filter { $0 >= now - Self.rateWindow }.count) / Self.rateWindow
    }

    /// The summary of the message's last sample and how many samples it carried.
    private mutating func decode(_ kind: PayloadKind?, payload: [UInt8]) -> (String?, Int) {
        guard let kind else { return (String(decoding: payload.prefix(60), as: UTF8.self), 1) }
        let messages: [WireMessage]
        do {
            messages = try PayloadDecoder.decode(payload, kind: kind)
        } catch {
            return ("(\(error.description))", 1)
        }
        guard let last = messages.last else { return (nil, 0) }
        return (describe(last.payload), messages.count)
    }

    /// The payload's line (its codec's summary); the acceleration and the attitude also feed the sparklines.
    private mutating func describe(_ payload: StreamPayload) -> String {
        switch payload {
        case .acceleration(let a): accelerationMagnitude = a.norm
        case .deviceMotion(let m):
            let degrees = 180 / Double.pi
            attitude = (m.roll * degrees, m.pitch * degrees, m.yaw * degrees)
        default: break
        }
        return payload.summary
    }

    private static func describe(_ report: AgentMetrics) -> String {
        [
            String(format: "cpu %.1f%%", report.process.cpuPercent),
            String(format: "rss %.1f MiB", Double(report.process.rssBytes) / 1_048_576),
            "published \(report.messages.published)",
            "dropped \(report.messages.droppedOverflow)",
            "outbox \(report.outbox.depth)",
            "reconnects \(report.connection.reconnects)",
        ].joined(separator: "  ")
    }
}
