import AgentConfig
import MotionHistory
import MotionWire

extension ControlResult.Shape {
    /// Whether a command with this result changed what the retained status shows (the door republishes it): a
    /// stream's settings (configure, capture-reference-attitude) or a reload. Read off the result, so the command
    /// enum is matched in one place only, `ControlCommand.run`.
    var changesState: Bool {
        switch self {
        case .stream, .reload: true
        case .status, .streams, .ping, .pedometerReset, .pedometerQuery, .activityQuery, .fall: false
        }
    }
}

extension ControlCommand {
    /// Carries the command out inside the door. One exhaustive switch: each case is handled once, and a command
    /// added to the enum does not compile until it is handled here (the table's handlers matched the enum again,
    /// with a "report this bug" error for a command reaching another's handler).
    func run(in context: ControlContext) throws -> ControlResult {
        switch self {
        case .configure(let settings, let stream):
            try context.configure(settings)
            return .stream(context.controller.streamStatus(stream))
        case .captureReferenceAttitude:
            let q = try context.controller.currentAttitude()
            let text = DeviceMotionSettings.referenceAttitudeText(q)
            switch ControlCommand.configuring(.deviceMotion, ["reference_attitude": text]) {
            case .success(let captured): return try captured.run(in: context)
            case .failure(let failure):
                throw ControlFailure(
                    .conflict,
                    "device motion's current attitude cannot be kept as the reference: \(failure.message) — retry once device motion publishes a valid attitude, or give w, x, y and z"
                )
            }
        case .resetPedometer:
            try context.controller.resetPedometer()
            context.history?.pedometerWasReset(now: context.clock())
            return .pedometerReset(ControlResult.PedometerReset())
        case .resolveFall(let resolution, let date):
            return .fall(try context.controller.resolveFall(resolution, date: date))
        case .reloadConfig:
            switch context.reload() {
            case .applied(let report): return .reload(report)
            case .refused(let failure): throw failure
            }
        case .queryPedometer(let from, let to):
            return .pedometerQuery(try Self.history(context) { try $0.queryPedometer(from: from, to: to) })
        case .queryActivity(let from, let to):
            return .activityQuery(try Self.history(context) { try $0.queryActivity(from: from, to: to) })
        case .status:
            return .status(context.status())
        case .listStreams:
            return .streams(context.status().streams ?? [:])
        case .ping:
            return .ping(ControlResult.Ping(time: context.clock()))
        }
    }

    /// A query of the on-device history, its errors as the reply's codes.
    private static func history<T>(_ context: ControlContext, _ query: (any StepHistory) throws -> T) throws -> T {
        guard let history = context.history else {
            throw ControlFailure(
                .conflict,
                "step and activity history is unavailable on this device — the agent's log says why"
            )
        }
        do {
            return try query(history)
        } catch let e as HistoryError {
            switch e.code {
            case .invalidInterval, .tooManyResults: throw ControlFailure(.malformed, e.description)
            case .outsideRetention: throw ControlFailure(.conflict, e.description)
            default: throw ControlFailure(.internalFailure, e.description)
            }
        }
    }
}
