import Foundation
import MotionModel

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

    var root: String
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

    init(root: String) { self.root = root }

    /// One message of the device's topics, received at `now` (monotonic seconds).
    mutating func receive(topic: String, payload: [UInt8], now: Double) {
        guard topic.hasPrefix(root + "/") else { return }
        let name = String(topic.dropFirst(root.count + 1))
        if name == "control" || name.hasPrefix("control/") { return }
        if name == "status" {
            if let object = Self.object(payload) {
                state = object["state"] as? String ?? state
                bootCount = object["bootCount"] as? Int
                agentVersion = object["agentVersion"] as? String
            }
            return
        }
        if name == "metrics" {
            if let object = Self.object(payload) { metrics = Self.describeMetrics(object) }
            return
        }
        var stream = streams[name] ?? Stream()
        stream.messages += 1
        let (summary, count) = decode(name: name, payload: payload)
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
    private mutating func decode(name: String, payload: [UInt8]) -> (String?, Int) {
        if payload.first == UInt8(ascii: "M") { return decodeBinary(name: name, payload: payload) }
        guard let object = Self.object(payload) else { return (String(decoding: payload.prefix(60), as: UTF8.self), 1) }
        if let batch = object["batch"] as? [[String: Any]] {
            guard let last = batch.last else { return (nil, 0) }
            return (describe(name: name, last), batch.count)
        }
        return (describe(name: name, object), 1)
    }

    private mutating func describe(name: String, _ o: [String: Any]) -> String {
        func vector(_ v: Any?) -> (Double, Double, Double)? {
            guard let d = v as? [String: Any], let x = Self.number(d["x"]), let y = Self.number(d["y"]),
                let z = Self.number(d["z"])
            else { return nil }
            return (x, y, z)
        }
        func triple(_ v: (Double, Double, Double)) -> String {
            String(format: "x=%+.4f y=%+.4f z=%+.4f", v.0, v.1, v.2)
        }
        switch name {
        case "accelerometer":
            guard let a = vector(o["acceleration"]) else { break }
            let magnitude = (a.0 * a.0 + a.1 * a.1 + a.2 * a.2).squareRoot()
            accelerationMagnitude = magnitude
            return triple(a) + String(format: "  |a|=%.3f g", magnitude)
        case "gyroscope":
            if let r = vector(o["rotationRate"]) { return triple(r) + " rad/s" }
        case "magnetometer":
            if let m = vector(o["magneticField"]) { return triple(m) + " µT" }
        case "device-motion":
            guard let att = o["attitude"] as? [String: Any], let roll = Self.number(att["roll"]),
                let pitch = Self.number(att["pitch"]), let yaw = Self.number(att["yaw"])
            else { break }
            let degrees = 180 / Double.pi
            attitude = (roll * degrees, pitch * degrees, yaw * degrees)
            var text = String(
                format: "roll=%+6.1f° pitch=%+6.1f° yaw=%+6.1f°",
                roll * degrees,
                pitch * degrees,
                yaw * degrees
            )
            if let heading = Self.number(o["heading"]), heading >= 0 {
                text += String(format: " heading=%.1f°", heading)
            }
            if let user = vector(o["userAcceleration"]) {
                text += String(
                    format: " |user|=%.3f g",
                    (user.0 * user.0 + user.1 * user.1 + user.2 * user.2).squareRoot()
                )
            }
            return text
        case "pedometer":
            var text = "steps=\(Self.number(o["numberOfSteps"]).map { String(Int($0)) } ?? "–")"
            if let d = Self.number(o["distance"]) { text += String(format: " distance=%.1f m", d) }
            if let c = Self.number(o["currentCadence"]) { text += String(format: " cadence=%.2f/s", c) }
            return text
        case "activity":
            let flags = ["stationary", "walking", "running", "cycling", "automotive", "unknown"].filter {
                o[$0] as? Bool == true
            }
            return (flags.isEmpty ? "none" : flags.joined(separator: "+")) + " (\(o["confidence"] as? String ?? "?"))"
        case "altimeter":
            var text = ""
            if let r = Self.number(o["relativeAltitude"]) { text += String(format: "relative=%+.2f m", r) }
            if let p = Self.number(o["pressure"]) { text += String(format: " pressure=%.3f kPa", p) }
            return text
        case "altimeter/absolute":
            if let a = Self.number(o["altitude"]) { return String(format: "altitude=%.1f m", a) }
        case "submersion":
            if let d = Self.number(o["depth"]) {
                return String(format: "depth=%.2f m state=%@", d, o["state"] as? String ?? "?")
            }
        default:
            break
        }
        return o.keys.sorted().filter { !["seq", "timestamp", "time"].contains($0) }.prefix(4).map { key in
            "\(key)=\(Self.number(o[key]).map { String(format: "%.3f", $0) } ?? "\(o[key]!)")"
        }.joined(separator: " ")
    }

    /// The binary batch layout of docs/payloads.md: 16-byte header, then 28-byte raw or 88-byte device-motion
    /// records; little-endian.
    private mutating func decodeBinary(name: String, payload: [UInt8]) -> (String?, Int) {
        guard payload.count >= 16, payload[0] == 0x4D, payload[1] == 0x41, payload[2] == 0x42, payload[3] == 1 else {
            return ("(unknown binary layout)", 1)
        }
        let count = Int(payload[6]) | Int(payload[7]) << 8
        let kind = payload[4]
        let size = kind == 4 ? 88 : 28
        guard count > 0, payload.count >= 16 + count * size else { return (nil, count) }
        let base = 16 + (count - 1) * size
        func f32(_ offset: Int) -> Double {
            let bits =
                UInt32(payload[base + offset]) | UInt32(payload[base + offset + 1]) << 8
                | UInt32(payload[base + offset + 2]) << 16 | UInt32(payload[base + offset + 3]) << 24
            return Double(Float(bitPattern: bits))
        }
        if kind == 4 {
            let q = Quaternion(w: f32(28), x: f32(16), y: f32(20), z: f32(24))
            let degrees = 180 / Double.pi
            attitude = (q.roll * degrees, q.pitch * degrees, q.yaw * degrees)
            return (
                String(
                    format: "roll=%+6.1f° pitch=%+6.1f° yaw=%+6.1f° (binary)",
                    q.roll * degrees,
                    q.pitch * degrees,
                    q.yaw * degrees
                ), count
            )
        }
        let (x, y, z) = (f32(16), f32(20), f32(24))
        if name == "accelerometer" { accelerationMagnitude = (x * x + y * y + z * z).squareRoot() }
        return (String(format: "x=%+.4f y=%+.4f z=%+.4f (binary)", x, y, z), count)
    }

    private static func describeMetrics(_ o: [String: Any]) -> String {
        let process = o["process"] as? [String: Any] ?? [:]
        let messages = o["messages"] as? [String: Any] ?? [:]
        let outbox = o["outbox"] as? [String: Any] ?? [:]
        let connection = o["connection"] as? [String: Any] ?? [:]
        var parts: [String] = []
        if let cpu = number(process["cpuPercent"]) { parts.append(String(format: "cpu %.1f%%", cpu)) }
        if let rss = number(process["rssBytes"]) { parts.append(String(format: "rss %.1f MiB", rss / 1_048_576)) }
        if let p = number(messages["published"]) { parts.append("published \(Int(p))") }
        if let d = number(messages["droppedOverflow"]) { parts.append("dropped \(Int(d))") }
        if let depth = number(outbox["depth"]) { parts.append("outbox \(Int(depth))") }
        if let r = number(connection["reconnects"]) { parts.append("reconnects \(Int(r))") }
        return parts.joined(separator: "  ")
    }

    static func object(_ payload: [UInt8]) -> [String: Any]? {
        try? JSONSerialization.jsonObject(with: Data(payload)) as? [String: Any]
    }

    static func number(_ value: Any?) -> Double? {
        if let n = value as? NSNumber, !(value is Bool) { return n.doubleValue }
        return value as? Double
    }
}
