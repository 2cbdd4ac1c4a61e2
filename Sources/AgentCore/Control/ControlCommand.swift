import AgentConfig
import AgentPorts
import Foundation
import MotionModel

/// The commands an operator can send, with their arguments already type-checked.
public enum ControlCommand: Sendable, Equatable {
    case start(StreamName)
    case stop(StreamName)
    /// Hz; from `rate_hz` or `1 / interval_s`.
    case setRate(StreamName, rateHz: Double)
    case setQoS(StreamName, qos: Int)
    case setRetain(StreamName, retain: Bool)
    /// Samples per message, and their encoding (nil keeps the current one).
    case setBatch(StreamName, batch: Int, encoding: StreamEncoding?)
    case setReferenceFrame(AttitudeReferenceFrame)
    case resetPedometer
    case reloadConfig
    /// Core Motion's queryPedometerData(from:to:), Unix seconds.
    case queryPedometer(from: Double, to: Double)
    /// Core Motion's queryActivityStarting(from:to:), Unix seconds.
    case queryActivity(from: Double, to: Double)
    case status
    case listStreams
    case ping

    public static let names = [
        "start", "stop", "set-rate", "set-qos", "set-retain", "set-batch", "set-reference-frame", "reset-pedometer",
        "query-pedometer", "query-activity", "reload-config", "status",
        "list-streams", "ping",
    ]

    static func argumentHelp(_ name: String) -> String {
        switch name {
        case "start", "stop": "\"stream\""
        case "set-rate": "\"stream\" and one of \"rate_hz\" or \"interval_s\""
        case "set-qos": "\"stream\" and \"qos\" (0, 1 or 2)"
        case "set-retain": "\"stream\" and \"retain\" (true or false)"
        case "set-batch":
            "\"stream\" (accelerometer, gyroscope, magnetometer or device-motion), \"batch\" (1–1000 samples per message) and optionally \"encoding\" (json or binary)"
        case "query-pedometer", "query-activity":
            "\"from\" and \"to\": ISO 8601 (2026-11-21T08:00:00Z) or Unix seconds"
        case "set-reference-frame":
            "\"frame\" (\(AttitudeReferenceFrame.allCases.map(\.rawValue).joined(separator: ", ")))"
        default: "no arguments"
        }
    }

    /// A time argument: Unix seconds, or an ISO 8601 date-time string.
    static func time(_ key: String, _ args: inout Arguments) -> Result<Double, ControlFailure> {
        let help = "\"\(key)\" must be a time: ISO 8601 (2026-11-21T08:00:00Z) or Unix seconds"
        if case .success(let n?) = args.number(key) { return .success(n) }
        switch args.string(key) {
        case .success(let text?):
            let formatter = ISO8601DateFormatter()
            if let d = formatter.date(from: text) { return .success(d.timeIntervalSince1970) }
            formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
            if let d = formatter.date(from: text) { return .success(d.timeIntervalSince1970) }
            return .failure(ControlFailure(code: 400, id: nil, "\(help), not \"\(text)\""))
        case .success(nil): return .failure(ControlFailure(code: 400, id: nil, "\(help); it is missing"))
        case .failure: return .failure(ControlFailure(code: 400, id: nil, help))
        }
    }

    /// The highest rate a command may ask for, Hz. The hardware clamps further; this only refuses nonsense.
    public static let maximumRateHz = 10_000.0

    static func parse(name: String, arguments args: inout Arguments) -> Result<ControlCommand, ControlFailure> {
        func stream() -> Result<StreamName, ControlFailure> {
            switch args.string("stream") {
            case .failure(let f): return .failure(f)
            case .success(nil):
                return .failure(
                    ControlFailure(
                        code: 400,
                        id: nil,
                        "\(name) needs \"stream\" — one of \(StreamName.allCases.map(\.rawValue).joined(separator: ", "))"
                    )
                )
            case .success(let s?):
                guard let stream = StreamName(rawValue: s) else {
                    return .failure(
                        ControlFailure(
                            code: 404,
                            id: nil,
                            "unknown stream \"\(s)\" — streams: \(StreamName.allCases.map(\.rawValue).joined(separator: ", "))"
                        )
                    )
                }
                return .success(stream)
            }
        }
        switch name {
        case "start": return stream().map { .start($0) }
        case "stop": return stream().map { .stop($0) }
        case "set-rate":
            return stream().flatMap { s in
                let rate = args.number("rate_hz")
                let interval = args.number("interval_s")
                switch (rate, interval) {
                case (.failure(let f), _), (_, .failure(let f)): return .failure(f)
                case (.success(let r?), .success(nil)):
                    guard r > 0, r <= maximumRateHz else {
                        return .failure(
                            ControlFailure(
                                code: 400,
                                id: nil,
                                "rate_hz \(r) is out of range — a number > 0 and ≤ \(Int(maximumRateHz)); rates above the hardware's maximum are clamped"
                            )
                        )
                    }
                    return .success(.setRate(s, rateHz: r))
                case (.success(nil), .success(let i?)):
                    guard i > 0, 1 / i <= maximumRateHz else {
                        return .failure(
                            ControlFailure(
                                code: 400,
                                id: nil,
                                "interval_s \(i) is out of range — a number ≥ \(1 / maximumRateHz) (seconds)"
                            )
                        )
                    }
                    return .success(.setRate(s, rateHz: 1 / i))
                default:
                    return .failure(
                        ControlFailure(
                            code: 400,
                            id: nil,
                            "set-rate needs exactly one of \"rate_hz\" (Hz) or \"interval_s\" (seconds)"
                        )
                    )
                }
            }
        case "set-qos":
            return stream().flatMap { s in
                switch args.number("qos") {
                case .failure(let f): return .failure(f)
                case .success(let q?) where q == 0 || q == 1 || q == 2: return .success(.setQoS(s, qos: Int(q)))
                case .success(let q):
                    return .failure(
                        ControlFailure(code: 400, id: nil, "qos \(q.map { "\($0)" } ?? "missing") — allowed: 0, 1 or 2")
                    )
                }
            }
        case "set-retain":
            return stream().flatMap { s in
                switch args.bool("retain") {
                case .failure(let f): return .failure(f)
                case .success(let r?): return .success(.setRetain(s, retain: r))
                case .success(nil):
                    return .failure(ControlFailure(code: 400, id: nil, "set-retain needs \"retain\": true or false"))
                }
            }
        case "set-batch":
            return stream().flatMap { s in
                guard s.canBatch else {
                    return .failure(
                        ControlFailure(code: 400, id: nil, "\(s.rawValue) does not batch — \(argumentHelp(name))")
                    )
                }
                let encoding: StreamEncoding?
                switch args.string("encoding") {
                case .failure(let f): return .failure(f)
                case .success(nil): encoding = nil
                case .success(let e?):
                    guard let parsed = StreamEncoding(rawValue: e) else {
                        return .failure(
                            ControlFailure(code: 400, id: nil, "encoding \"\(e)\" — allowed: json or binary")
                        )
                    }
                    encoding = parsed
                }
                switch args.number("batch") {
                case .failure(let f): return .failure(f)
                case .success(let n?) where n >= 1 && n <= 1000 && n == n.rounded():
                    return .success(.setBatch(s, batch: Int(n), encoding: encoding))
                case .success(let n):
                    return .failure(
                        ControlFailure(
                            code: 400,
                            id: nil,
                            "batch \(n.map { "\($0)" } ?? "missing") — allowed: a whole number of samples per message from 1 to 1000"
                        )
                    )
                }
            }
        case "set-reference-frame":
            switch args.string("frame") {
            case .failure(let f): return .failure(f)
            case .success(nil):
                return .failure(
                    ControlFailure(code: 400, id: nil, "set-reference-frame needs \"frame\": \(argumentHelp(name))")
                )
            case .success(let f?):
                guard let frame = AttitudeReferenceFrame(rawValue: f) else {
                    return .failure(
                        ControlFailure(code: 400, id: nil, "unknown frame \"\(f)\" — \(argumentHelp(name))")
                    )
                }
                return .success(.setReferenceFrame(frame))
            }
        case "reset-pedometer": return .success(.resetPedometer)
        case "reload-config": return .success(.reloadConfig)
        case "query-pedometer", "query-activity":
            let from = time("from", &args)
            let to = time("to", &args)
            switch (from, to) {
            case (.failure(let f), _), (_, .failure(let f)): return .failure(f)
            case (.success(let a), .success(let b)):
                guard a <= b else {
                    return .failure(
                        ControlFailure(code: 400, id: nil, "\"from\" is after \"to\" — give the earlier time first")
                    )
                }
                return .success(
                    name == "query-pedometer" ? .queryPedometer(from: a, to: b) : .queryActivity(from: a, to: b)
                )
            }
        case "status": return .success(.status)
        case "list-streams": return .success(.listStreams)
        case "ping": return .success(.ping)
        default:
            return .failure(
                ControlFailure(
                    code: 404,
                    id: nil,
                    "unknown command \"\(name)\" — commands: \(names.joined(separator: ", "))"
                )
            )
        }
    }
}
