import AgentConfig
import AgentPipeline
import AgentPorts
import Foundation
import MotionHistory
import MotionModel
import MotionWire

/// One command, whole: its name, its help, how its arguments are read and what it does. `table` is the only
/// list of commands; the agent's parser and dispatcher and `motion-agent ctl`'s help and validation read it.
package struct ControlCommandDescriptor: Sendable {
    package let name: String
    /// One short line for help (under 60 characters, so help never wraps it): what the command does.
    package let summary: String
    /// The arguments it accepts, in words (also quoted when an argument is refused).
    package let arguments: String
    /// `key=value` argument lists as `motion-agent ctl` takes them, together showing every argument; each must
    /// parse (tested).
    package let examples: [String]
    /// The shape of its result in the reply.
    package let result: ControlResult.Shape
    /// Its arguments read into the command the door carries out (`ControlCommand.run`).
    let parse: @Sendable (inout Arguments) -> Result<ControlCommand, ControlFailure>

    package static func named(_ name: String) -> ControlCommandDescriptor? {
        table.first { $0.name == name }
    }

    package static var names: [String] { table.map(\.name) }

    /// The highest rate a command may ask for, Hz: config.yaml's limit for `streams.<stream>.rate_hz` (the
    /// config schema checks it, whichever door a value comes through). The hardware clamps further.
    package static let maximumRateHz = 1000.0

    /// Help for every command: its summary, then its examples as `motion-agent ctl` takes them, each line short
    /// enough that help does not wrap it.
    package static var helpText: String {
        table.map { d in
            (["  \(d.name) — \(d.summary)"]
                + d.examples.map { $0.isEmpty ? "      \(d.name)" : "      \(d.name) \($0)" })
                .joined(separator: "\n")
        }.joined(separator: "\n")
    }

    /// The JSON object of a command written as `ctl` takes it: `key=value` pairs, where numbers and
    /// true/false become JSON numbers and booleans; members in the order given (id, command, timestamp, pairs).
    package static func object(
        id: String,
        command: String,
        pairs: [String],
        timestamp: Double?
    ) throws(ControlFailure) -> [(key: String, value: StrictJSON.Value)] {
        var members: [(key: String, value: StrictJSON.Value)] = [("id", .string(id)), ("command", .string(command))]
        if let timestamp { members.append(("timestamp", .number(String(timestamp)))) }
        for pair in pairs {
            guard let eq = pair.firstIndex(of: "=") else {
                throw ControlFailure(.malformed, "argument '\(pair)' is not key=value, e.g. stream=gyroscope")
            }
            let key = String(pair[..<eq])
            let value = String(pair[pair.index(after: eq)...])
            guard !members.contains(where: { $0.key == key }) else {
                throw ControlFailure(.malformed, "argument '\(key)' is given twice")
            }
            if value == "true" || value == "false" {
                members.append((key, .bool(value == "true")))
            } else if let n = Double(value), n.isFinite {
                // As JSON writes it: a literal the strict parser accepts (Swift's description of a Double is).
                members.append((key, .number(n == n.rounded() && abs(n) < 1e15 ? String(Int(n)) : String(n))))
            } else {
                members.append((key, .string(value)))
            }
        }
        return members
    }

    package static let table: [ControlCommandDescriptor] = [
        streamCommand("start", summary: "enable a stream", examples: ["stream=gyroscope"], sets: ["enabled": "true"]),
        streamCommand(
            "stop",
            summary: "disable a stream",
            examples: ["stream=magnetometer"],
            sets: ["enabled": "false"]
        ),
        ControlCommandDescriptor(
            name: "set-rate",
            summary: "a stream's rate (clamped to the hardware)",
            arguments: "\"stream\" and one of \"rate_hz\" or \"interval_s\"",
            examples: ["stream=gyroscope rate_hz=50", "stream=accelerometer interval_s=0.02"],
            result: .stream,
            parse: { args in
                args.stream(for: "set-rate").flatMap { s in
                    switch (args.number("rate_hz"), args.number("interval_s")) {
                    case (.failure(let f), _), (_, .failure(let f)): return .failure(f)
                    case (.success(let r?), .success(nil)):
                        return ControlCommand.configuring(s, ["rate_hz": String(r)])
                    case (.success(nil), .success(let i?)):
                        guard i > 0,
                            case .success(let command) = ControlCommand.configuring(s, ["rate_hz": String(1 / i)])
                        else {
                            return .failure(
                                ControlFailure(
                                    .malformed,
                                    "interval_s \(i) is out of range — a number ≥ \(1 / maximumRateHz) (seconds), the "
                                        + "interval of streams.<stream>.rate_hz's limit; rates above the hardware's are clamped"
                                )
                            )
                        }
                        return .success(command)
                    default:
                        return .failure(
                            ControlFailure(
                                .malformed,
                                "set-rate needs exactly one of \"rate_hz\" (Hz) or \"interval_s\" (seconds)"
                            )
                        )
                    }
                }
            }
        ),
        ControlCommandDescriptor(
            name: "set-qos",
            summary: "a stream's MQTT QoS",
            arguments: "\"stream\" and \"qos\" (0, 1 or 2)",
            examples: ["stream=gyroscope qos=1"],
            result: .stream,
            parse: { args in
                args.stream(for: "set-qos").flatMap { s in
                    switch args.number("qos") {
                    case .failure(let f): return .failure(f)
                    case .success(let q?) where q == 0 || q == 1 || q == 2:
                        return ControlCommand.configuring(s, ["qos": String(Int(q))])
                    case .success(let q):
                        return .failure(
                            ControlFailure(.malformed, "qos \(q.map { "\($0)" } ?? "missing") — allowed: 0, 1 or 2")
                        )
                    }
                }
            }
        ),
        ControlCommandDescriptor(
            name: "set-retain",
            summary: "whether a stream's messages are retained",
            arguments: "\"stream\" and \"retain\" (true or false)",
            examples: ["stream=pedometer retain=true"],
            result: .stream,
            parse: { args in
                args.stream(for: "set-retain").flatMap { s in
                    switch args.bool("retain") {
                    case .failure(let f): return .failure(f)
                    case .success(let r?): return ControlCommand.configuring(s, ["retain": String(r)])
                    case .success(nil):
                        return .failure(ControlFailure(.malformed, "set-retain needs \"retain\": true or false"))
                    }
                }
            }
        ),
        ControlCommandDescriptor(
            name: "set-batch",
            summary: "samples per message, and their encoding",
            arguments:
                "\"stream\" (accelerometer, gyroscope, magnetometer or device-motion), \"batch\" (1–1000 samples per message) and optionally \"encoding\" (json or binary)",
            examples: ["stream=accelerometer batch=20 encoding=binary", "stream=gyroscope batch=1"],
            result: .stream,
            parse: { args in
                args.stream(for: "set-batch").flatMap { s in
                    guard s.canBatch else {
                        return .failure(
                            ControlFailure(
                                .malformed,
                                "\(s.rawValue) does not batch — \(named("set-batch")!.arguments)"
                            )
                        )
                    }
                    let encoding: StreamEncoding?
                    switch args.string("encoding") {
                    case .failure(let f): return .failure(f)
                    case .success(nil): encoding = nil
                    case .success(let e?):
                        guard let parsed = StreamEncoding(rawValue: e) else {
                            return .failure(ControlFailure(.malformed, "encoding \"\(e)\" — allowed: json or binary"))
                        }
                        encoding = parsed
                    }
                    switch args.number("batch") {
                    case .failure(let f): return .failure(f)
                    case .success(let n?) where n >= 1 && n <= 1000 && n == n.rounded():
                        var values = ["batch": String(Int(n))]
                        if let encoding { values["encoding"] = encoding.rawValue }
                        return ControlCommand.configuring(s, values)
                    case .success(let n):
                        return .failure(
                            ControlFailure(
                                .malformed,
                                "batch \(n.map { "\($0)" } ?? "missing") — allowed: a whole number of samples per message from 1 to 1000"
                            )
                        )
                    }
                }
            }
        ),
        ControlCommandDescriptor(
            name: "set-reference-frame",
            summary: "device motion's attitude reference frame",
            arguments: "\"frame\" (\(AttitudeReferenceFrame.allCases.map(\.rawValue).joined(separator: ", ")))",
            examples: ["frame=xMagneticNorthZVertical"],
            result: .stream,
            parse: { args in
                let help = "\"frame\" (\(AttitudeReferenceFrame.allCases.map(\.rawValue).joined(separator: ", ")))"
                switch args.string("frame") {
                case .failure(let f): return .failure(f)
                case .success(nil):
                    return .failure(ControlFailure(.malformed, "set-reference-frame needs \"frame\": \(help)"))
                case .success(let f?):
                    guard let frame = AttitudeReferenceFrame(rawValue: f) else {
                        return .failure(ControlFailure(.malformed, "unknown frame \"\(f)\" — \(help)"))
                    }
                    return ControlCommand.configuring(.deviceMotion, ["reference_frame": frame.rawValue])
                }
            }
        ),
        ControlCommandDescriptor(
            name: "set-reference-attitude",
            summary: "relative attitude from now on (or a given one)",
            arguments:
                "none (capture device motion's current attitude), or all of \"w\", \"x\", \"y\", \"z\": a quaternion in the current reference frame (finite, non-zero norm; normalised)",
            examples: ["", "w=0.7071068 x=0 y=0 z=0.7071068"],
            result: .stream,
            parse: { args in
                var given: [String: Double] = [:]
                for key in ["w", "x", "y", "z"] {
                    switch args.number(key) {
                    case .failure(let f): return .failure(f)
                    case .success(let v?): given[key] = v
                    case .success(nil): break
                    }
                }
                if given.isEmpty { return .success(.captureReferenceAttitude) }
                let missing = ["w", "x", "y", "z"].filter { given[$0] == nil }
                guard missing.isEmpty else {
                    return .failure(
                        ControlFailure(
                            .malformed,
                            "set-reference-attitude lacks \(missing.map { "\"\($0)\"" }.joined(separator: ", ")): give all four of w, x, y, z (a quaternion), or none of them to capture the current attitude"
                        )
                    )
                }
                let q = Quaternion(w: given["w"]!, x: given["x"]!, y: given["y"]!, z: given["z"]!)
                return ControlCommand.configuring(
                    .deviceMotion,
                    ["reference_attitude": DeviceMotionSettings.referenceAttitudeText(q)]
                )
            }
        ),
        ControlCommandDescriptor(
            name: "clear-reference-attitude",
            summary: "absolute attitude only again",
            arguments: "no arguments",
            examples: [""],
            result: .stream,
            parse: { _ in ControlCommand.configuring(.deviceMotion, ["reference_attitude": "none"]) }
        ),
        ControlCommandDescriptor(
            name: "reset-pedometer",
            summary: "count steps from zero again",
            arguments: "no arguments",
            examples: [""],
            result: .pedometerReset,
            parse: { _ in .success(.resetPedometer) }
        ),
        fallResolution(
            "confirm-fall",
            .confirmed,
            summary: "an operator confirms the fall awaiting one"
        ),
        fallResolution(
            "dismiss-fall",
            .dismissed,
            summary: "an operator dismisses the fall awaiting one"
        ),
        historyQuery(
            "query-pedometer",
            summary: "steps in an interval, from the history",
            make: { .queryPedometer(from: $0, to: $1) }
        ),
        historyQuery(
            "query-activity",
            summary: "activity segments in an interval, from the history",
            limit:
                "; at most \(HistoryStore.maximumActivitySegments) segments may start in it (more: 400, naming where to split)",
            make: { .queryActivity(from: $0, to: $1) }
        ),
        ControlCommandDescriptor(
            name: "reload-config",
            summary: "re-read config.yaml, like SIGHUP",
            arguments: "no arguments",
            examples: [""],
            result: .reload,
            parse: { _ in .success(.reloadConfig) }
        ),
        ControlCommandDescriptor(
            name: "status",
            summary: "the full current state",
            arguments: "no arguments",
            examples: [""],
            result: .status,
            parse: { _ in .success(.status) }
        ),
        ControlCommandDescriptor(
            name: "list-streams",
            summary: "every stream's state",
            arguments: "no arguments",
            examples: [""],
            result: .streams,
            parse: { _ in .success(.listStreams) }
        ),
        ControlCommandDescriptor(
            name: "ping",
            summary: "is the device there, and its clock",
            arguments: "no arguments",
            examples: [""],
            result: .ping,
            parse: { _ in .success(.ping) }
        ),
    ]

    /// A command with only a `stream` argument that sets fixed keys of its section.
    private static func streamCommand(
        _ name: String,
        summary: String,
        examples: [String],
        sets values: [String: String]
    ) -> ControlCommandDescriptor {
        ControlCommandDescriptor(
            name: name,
            summary: summary,
            arguments: "\"stream\"",
            examples: examples,
            result: .stream,
            parse: { args in args.stream(for: name).flatMap { ControlCommand.configuring($0, values) } }
        )
    }

    /// An operator's resolution of the fall awaiting one (Core Motion's `confirmed`, `dismissed`): the events
    /// stream publishes the follow-up, and the reply carries it.
    private static func fallResolution(
        _ name: String,
        _ resolution: FallDetectionEvent.Resolution,
        summary: String
    ) -> ControlCommandDescriptor {
        ControlCommandDescriptor(
            name: name,
            summary: summary,
            arguments:
                "optional \"date\": the fall's date (Unix seconds, as its report on the events topic has it): only that fall is resolved",
            examples: ["", "date=1795241100.25"],
            result: .fall,
            parse: { args in
                args.number("date").map { .resolveFall(resolution, date: $0) }
            }
        )
    }

    private static func historyQuery(
        _ name: String,
        summary: String,
        limit: String = "",
        make: @escaping @Sendable (Double, Double) -> ControlCommand
    ) -> ControlCommandDescriptor {
        ControlCommandDescriptor(
            name: name,
            summary: summary,
            arguments: "\"from\" and \"to\": ISO 8601 (2026-11-21T08:00:00Z) or Unix seconds" + limit,
            examples: ["from=2026-11-21T08:00:00Z to=2026-11-21T09:00:00Z", "from=1763712000 to=1763715600"],
            result: name == "query-pedometer" ? .pedometerQuery : .activityQuery,
            parse: { args in
                switch (args.time("from"), args.time("to")) {
                case (.failure(let f), _), (_, .failure(let f)): return .failure(f)
                case (.success(let a), .success(let b)):
                    guard a <= b else {
                        return .failure(
                            ControlFailure(.malformed, "\"from\" is after \"to\" — give the earlier time first")
                        )
                    }
                    return .success(make(a, b))
                }
            }
        )
    }
}
