import Foundation
import MotionModel

/// What an applied command answers with, one shape per kind of command (docs/schemas/control-reply.schema.json,
/// `result`). Encoded as the bare value; decoding needs the shape of the command it answers
/// (`ControlReply.decode(_:shape:)`), since the shapes alone do not say which one a reply carries.
public enum ControlResult: Sendable, Equatable, Codable {
    /// The shape a command's result has; each `ControlCommandDescriptor` names its own.
    public enum Shape: Sendable, Equatable, Hashable {
        case stream, status, streams, ping, pedometerReset, pedometerQuery, activityQuery, reload, fall
    }

    /// start, stop, set-*: the stream's state with the effective, clamped rate.
    case stream(AgentStatus.Stream)
    /// status: the same document as the retained birth.
    case status(AgentStatus)
    /// list-streams.
    case streams([String: AgentStatus.Stream])
    /// ping: the device's clock, Unix seconds.
    case ping(Ping)
    /// reset-pedometer.
    case pedometerReset(PedometerReset)
    /// query-pedometer.
    case pedometerQuery(PedometerQuery)
    /// query-activity: segments that start in the interval, oldest first.
    case activityQuery([ActivitySegment])
    /// reload-config: what applied at once and what needs a restart.
    case reload(ReloadReport)
    /// confirm-fall, dismiss-fall: the follow-up the events stream published, its dates in Unix seconds.
    case fall(FallDetectionEvent)

    public struct Ping: Sendable, Equatable, Codable {
        public var time: Double
        public init(time: Double) { self.time = time }
    }

    public struct PedometerReset: Sendable, Equatable, Codable {
        public var numberOfSteps = 0
        public init() {}
    }

    /// Core Motion's queryPedometerData(from:to:) from the on-device history. Every key is always present:
    /// unknown values are null, and current pace and cadence are always null (no "current" in the past).
    public struct PedometerQuery: Sendable, Equatable, Codable {
        public var startDate: Double
        public var endDate: Double
        public var numberOfSteps: Int
        public var distance: Double?
        public var floorsAscended: Int?
        public var floorsDescended: Int?
        public var averageActivePace: Double?
        public var currentPace: Double?
        public var currentCadence: Double?

        public init(_ data: PedometerData) {
            startDate = data.startDate
            endDate = data.endDate
            numberOfSteps = data.numberOfSteps
            distance = data.distance
            floorsAscended = data.floorsAscended
            floorsDescended = data.floorsDescended
            averageActivePace = data.averageActivePace
        }

        private enum CodingKeys: String, CodingKey {
            case startDate, endDate, numberOfSteps, distance, floorsAscended, floorsDescended, averageActivePace
            case currentPace, currentCadence
        }

        public func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(startDate, forKey: .startDate)
            try c.encode(endDate, forKey: .endDate)
            try c.encode(numberOfSteps, forKey: .numberOfSteps)
            try c.encode(distance, forKey: .distance)
            try c.encode(floorsAscended, forKey: .floorsAscended)
            try c.encode(floorsDescended, forKey: .floorsDescended)
            try c.encode(averageActivePace, forKey: .averageActivePace)
            try c.encode(currentPace, forKey: .currentPace)
            try c.encode(currentCadence, forKey: .currentCadence)
        }
    }

    /// One segment of Core Motion's queryActivityStarting(from:to:).
    public struct ActivitySegment: Sendable, Equatable, Codable {
        public var startDate: Double
        public var stationary: Bool
        public var walking: Bool
        public var running: Bool
        public var cycling: Bool
        public var automotive: Bool
        public var unknown: Bool
        public var confidence: MotionActivity.Confidence

        public init(_ activity: MotionActivity) {
            startDate = activity.startDate
            stationary = activity.stationary
            walking = activity.walking
            running = activity.running
            cycling = activity.cycling
            automotive = activity.automotive
            unknown = activity.unknown
            confidence = activity.confidence
        }
    }

    public var shape: Shape {
        switch self {
        case .stream: .stream
        case .status: .status
        case .streams: .streams
        case .ping: .ping
        case .pedometerReset: .pedometerReset
        case .pedometerQuery: .pedometerQuery
        case .activityQuery: .activityQuery
        case .reload: .reload
        case .fall: .fall
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        switch self {
        case .stream(let v): try c.encode(v)
        case .status(let v): try c.encode(v)
        case .streams(let v): try c.encode(v)
        case .ping(let v): try c.encode(v)
        case .pedometerReset(let v): try c.encode(v)
        case .pedometerQuery(let v): try c.encode(v)
        case .activityQuery(let v): try c.encode(v)
        case .reload(let v): try c.encode(v)
        case .fall(let v): try c.encode(v)
        }
    }

    public init(from decoder: any Decoder) throws {
        guard let shape = decoder.userInfo[ControlReply.shapeKey] as? Shape else {
            throw DecodingError.dataCorrupted(
                DecodingError.Context(
                    codingPath: decoder.codingPath,
                    debugDescription:
                        "a result is read with the shape of the command it answers (ControlReply.decode(_:shape:))"
                )
            )
        }
        let c = try decoder.singleValueContainer()
        switch shape {
        case .stream: self = .stream(try c.decode(AgentStatus.Stream.self))
        case .status: self = .status(try c.decode(AgentStatus.self))
        case .streams: self = .streams(try c.decode([String: AgentStatus.Stream].self))
        case .ping: self = .ping(try c.decode(Ping.self))
        case .pedometerReset: self = .pedometerReset(try c.decode(PedometerReset.self))
        case .pedometerQuery: self = .pedometerQuery(try c.decode(PedometerQuery.self))
        case .activityQuery: self = .activityQuery(try c.decode([ActivitySegment].self))
        case .reload: self = .reload(try c.decode(ReloadReport.self))
        case .fall: self = .fall(try c.decode(FallDetectionEvent.self))
        }
    }
}
