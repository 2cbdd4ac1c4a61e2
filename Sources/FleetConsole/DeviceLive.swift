import AgentPorts
import Foundation
import MotionModel
import MotionWire

/// One watched device's streams, as the device view draws them: the samples since the last frame (attitude,
/// acceleration, rotation rate), the latest value of the slower streams, the latest events and each stream's
/// measured rate. Fed by the device's own subscription (`{root}/#`); `frame(now:)` hands the page what came since
/// the last one. Pure, and allocation-light: 50 Hz of three streams is ~150 samples a second.
package struct DeviceLive: Sendable {
    package let device: String
    let topics: TopicScheme
    /// Pending samples, flat: `[time, w, x, y, z, heading, rx, ry, rz]` per device-motion sample (Unix s, the
    /// quaternion, degrees, rad/s), `[time, x, y, z]` per accelerometer and gyroscope sample.
    private(set) var attitude: [Double] = []
    private(set) var acceleration: [Double] = []
    private(set) var rotation: [Double] = []
    /// The device-motion stream's acceleration (gravity + user acceleration) and rotation rate, for when the raw
    /// streams are off.
    private(set) var motionAcceleration: [Double] = []
    /// Stream path → its latest value, as JSON object text (numbers and fixed words only).
    private(set) var latest: [String: String] = [:]
    private var changedLatest: Set<String> = []
    /// The latest events, newest last: `[time, kind, text]` with `text` from fixed words and numbers.
    private(set) var events: [(time: Double, kind: String, text: String)] = []
    private var newEvents = 0
    /// Stream path → arrival times (monotonic s) of its samples in the last `rateWindow` seconds.
    private var arrivals: [String: [Double]] = [:]
    private var lastActivity: String?
    package var undecodable = 0

    /// Rates are measured over this window, seconds.
    static let rateWindow = 2.0
    static let eventLimit = 20
    /// Samples per series a frame carries at most (a page that fell behind gets the newest).
    static let frameSampleLimit = 2000

    package init(device: String, root: String) {
        self.device = device
        topics = TopicScheme(template: root, device: device)
    }

    /// One message on the device's topics, received at `now` (monotonic seconds). Returns whether it was one of
    /// its streams.
    @discardableResult
    package mutating func receive(topic: String, payload: [UInt8], now: Double) -> Bool {
        guard let path = topics.path(of: topic), let subject = topics.subject(of: topic),
            let kind = PayloadKind(subject: subject)
        else { return false }
        let messages: [WireMessage]
        do {
            messages = try PayloadDecoder.decode(payload, kind: kind)
        } catch {
            undecodable += 1
            return false
        }
        var times = arrivals[path] ?? []
        for message in messages {
            times.append(now)
            take(message, path: path)
        }
        times.removeFirst(times.prefix { $0 < now - Self.rateWindow }.count)
        arrivals[path] = times
        return true
    }

    private mutating func take(_ message: WireMessage, path: String) {
        let t = message.envelope.time
        switch message.payload {
        case .deviceMotion(let m):
            let q = m.attitude
            attitude += [t, q.w, q.x, q.y, q.z, m.heading, m.rotationRate.x, m.rotationRate.y, m.rotationRate.z]
            let a = m.gravity + m.userAcceleration
            motionAcceleration += [t, a.x, a.y, a.z]
            put(path, [("heading", m.heading), ("roll", m.roll), ("pitch", m.pitch), ("yaw", m.yaw)])
        case .acceleration(let v):
            acceleration += [t, v.x, v.y, v.z]
        case .rotationRate(let v):
            rotation += [t, v.x, v.y, v.z]
        case .magneticField(let v):
            put(path, [("x", v.x), ("y", v.y), ("z", v.z)])
        case .pedometer(let p):
            var fields: [(String, Double)] = [("steps", Double(p.numberOfSteps))]
            if let v = p.distance { fields.append(("distance", v)) }
            if let v = p.currentCadence { fields.append(("cadence", v)) }
            if let v = p.currentPace { fields.append(("pace", v)) }
            if let v = p.floorsAscended { fields.append(("floorsAscended", Double(v))) }
            if let v = p.floorsDescended { fields.append(("floorsDescended", Double(v))) }
            put(path, fields)
        case .pedometerEvent(let e):
            event(t, "pedometer", e.type.rawValue)
        case .activity(let a):
            let flags = [
                ("stationary", a.stationary), ("walking", a.walking), ("running", a.running),
                ("automotive", a.automotive), ("cycling", a.cycling), ("unknown", a.unknown),
            ]
            let names = flags.filter(\.1).map(\.0)
            let text = (names.isEmpty ? "none" : names.joined(separator: "+")) + " (\(a.confidence.rawValue))"
            latest[path] =
                "{\"activity\":\"\(names.joined(separator: "+"))\",\"confidence\":\"\(a.confidence.rawValue)\"}"
            changedLatest.insert(path)
            if names.joined(separator: "+") != lastActivity {
                lastActivity = names.joined(separator: "+")
                event(t, "activity", text)
            }
        case .altitude(let a):
            put(path, [("relativeAltitude", a.relativeAltitude), ("pressureKPa", a.pressureKPa)])
        case .absoluteAltitude(let a):
            put(path, [("altitude", a.altitude), ("accuracy", a.accuracy)])
        case .submersion(let s):
            put(path, [("depth", s.depth), ("pressureKPa", s.pressureKPa)])
        case .motionEvent:
            // The generated one-line summary: numbers and the enums' names only, never device text.
            event(t, "motion", message.payload.summary)
        default:
            // A stream without a view of its own (the sensors' temperature; one added since) shows its latest
            // message by its generated summary, as generated text only.
            latest[path] = "{\"summary\":" + ConsoleJSON.string(message.payload.summary) + "}"
            changedLatest.insert(path)
        }
    }

    private mutating func put(_ path: String, _ fields: [(String, Double)]) {
        latest[path] = "{" + fields.map { "\"\($0.0)\":\(Self.number($0.1))" }.joined(separator: ",") + "}"
        changedLatest.insert(path)
    }

    /// An event the device view lists (`kind` and `text` are the console's own words, never device text).
    package mutating func event(_ time: Double, _ kind: String, _ text: String) {
        events.append((time, kind, text))
        if events.count > Self.eventLimit { events.removeFirst(events.count - Self.eventLimit) }
        newEvents += 1
    }

    /// Samples per second of each stream over the last window, as of `now`.
    package func rates(now: Double) -> [String: Double] {
        arrivals.mapValues { Double($0.filter { $0 >= now - Self.rateWindow }.count) / Self.rateWindow }
    }

    /// Whether anything came since the last frame.
    package var hasNews: Bool {
        !attitude.isEmpty || !acceleration.isEmpty || !rotation.isEmpty || !changedLatest.isEmpty || newEvents > 0
    }

    /// The page's message for what came since the last frame (JSON text), or nil when nothing did; `rates` are
    /// added when asked (about once a second).
    package mutating func frame(now: Double, withRates: Bool) -> String? {
        guard hasNews || withRates else { return nil }
        var out = "{\"type\":\"samples\",\"device\":\(ConsoleJSON.string(device))"
        out += ",\"attitude\":" + Self.array(attitude, stride: 9)
        out += ",\"acceleration\":" + Self.array(acceleration, stride: 4)
        out += ",\"rotation\":" + Self.array(rotation, stride: 4)
        out += ",\"motionAcceleration\":" + Self.array(motionAcceleration, stride: 4)
        if !changedLatest.isEmpty {
            out +=
                ",\"latest\":{"
                + changedLatest.sorted().map { "\(ConsoleJSON.string($0)):\(latest[$0]!)" }.joined(separator: ",") + "}"
        }
        if newEvents > 0 {
            out +=
                ",\"events\":["
                + events.suffix(newEvents).map {
                    "[\(Self.number($0.time)),\(ConsoleJSON.string($0.kind)),\(ConsoleJSON.string($0.text))]"
                }.joined(separator: ",") + "]"
        }
        if withRates {
            out +=
                ",\"rates\":{"
                + rates(now: now).sorted { $0.key < $1.key }.map {
                    "\(ConsoleJSON.string($0.key)):\(Self.number($0.value))"
                }
                .joined(separator: ",") + "}"
        }
        out += "}"
        attitude.removeAll(keepingCapacity: true)
        acceleration.removeAll(keepingCapacity: true)
        rotation.removeAll(keepingCapacity: true)
        motionAcceleration.removeAll(keepingCapacity: true)
        changedLatest.removeAll(keepingCapacity: true)
        newEvents = 0
        return out
    }

    /// The current state of the slower streams and the events, for a page that starts watching.
    package func snapshot() -> String {
        var out = "{\"type\":\"samples\",\"device\":\(ConsoleJSON.string(device)),\"attitude\":[],\"acceleration\":[],"
        out += "\"rotation\":[],\"motionAcceleration\":[],\"latest\":{"
        out += latest.sorted { $0.key < $1.key }.map { "\(ConsoleJSON.string($0.key)):\($0.value)" }.joined(
            separator: ","
        )
        out += "},\"events\":["
        out += events.map { "[\(Self.number($0.time)),\(ConsoleJSON.string($0.kind)),\(ConsoleJSON.string($0.text))]" }
            .joined(separator: ",")
        return out + "]}"
    }

    /// `[[t, a, b, …], …]` of the newest `frameSampleLimit` samples.
    static func array(_ flat: [Double], stride: Int) -> String {
        let count = flat.count / stride
        let first = max(0, count - frameSampleLimit)
        var out = "["
        for index in first..<count {
            if index > first { out += "," }
            out += "["
            for field in 0..<stride {
                if field > 0 { out += "," }
                out += number(flat[index * stride + field])
            }
            out += "]"
        }
        return out + "]"
    }

    /// A JSON number; null for what JSON cannot carry.
    static func number(_ value: Double) -> String {
        guard value.isFinite else { return "null" }
        if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
        return String(value)
    }
}
