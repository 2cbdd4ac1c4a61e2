import AgentPorts

/// The payload shape of each stream topic (docs/payloads.md), and which of them may come as binary batches.
public enum PayloadKind: String, Sendable, Hashable, CaseIterable {
    case accelerometer
    case gyroscope
    case magnetometer
    case deviceMotion
    case pedometer
    case pedometerEvents
    case activity
    case altimeter
    case absoluteAltitude
    case submersion

    /// The topic's subject under the device's root.
    public var subject: TopicScheme.Subject {
        switch self {
        case .accelerometer: .stream(.accelerometer)
        case .gyroscope: .stream(.gyroscope)
        case .magnetometer: .stream(.magnetometer)
        case .deviceMotion: .stream(.deviceMotion)
        case .pedometer: .stream(.pedometer)
        case .pedometerEvents: .pedometerEvents
        case .activity: .stream(.activity)
        case .altimeter: .stream(.altimeter)
        case .absoluteAltitude: .absoluteAltitude
        case .submersion: .stream(.submersion)
        }
    }

    /// The stream payload carried by `subject`'s topic; nil for status, metrics and control.
    public init?(subject: TopicScheme.Subject) {
        guard let kind = Self.allCases.first(where: { $0.subject == subject }) else { return nil }
        self = kind
    }

    /// The record layout of its binary batches; nil for streams that are never batched.
    public var binaryKind: BinaryBatchLayout.Kind? {
        switch self {
        case .accelerometer: .accelerometer
        case .gyroscope: .gyroscope
        case .magnetometer: .magnetometer
        case .deviceMotion: .deviceMotion
        default: nil
        }
    }
}
