import AgentPorts
import MotionModel

/// The binary batch layout ("MAB", docs/payloads.md "Batched streams"), all little-endian:
/// - header, 16 bytes: `"MAB"` (0x4D 0x41 0x42), version u8, kind u8 (1 accelerometer, 2 gyroscope,
///   3 magnetometer, 4 device-motion), reserved u8 = 0, count u16, seq of the first sample u64;
/// - then `count` records: raw sensors 28 bytes (version 1) — timestamp f64 (s, sensor clock), time f64 (Unix s),
///   x, y, z f32 (g, rad/s or µT); device motion 120 bytes (version 2) — timestamp f64, time f64, quaternion x, y,
///   z, w f32, rotationRate xyz f32, gravity xyz f32, userAcceleration xyz f32, magneticField xyz f32, heading f32,
///   accuracy u8 (0 uncalibrated … 3 high), referenceFrame u8 (0 xArbitraryZVertical, 1 …CorrectedZVertical,
///   2 xMagneticNorthZVertical, 3 xTrueNorthZVertical), flags u8 (bit 0: relative attitude present), reserved u8,
///   inclinationAccuracy f32, headingAccuracy f32 (degrees, −1 none), relative quaternion x, y, z, w f32,
///   referenceTime f64 (Unix s; the relative fields all zero while the flag is clear).
///
/// The version numbers the record layout of the batch's kind, so a reader that does not know a kind's version
/// refuses the batch instead of misreading it: raw sensors are at version 1; device motion went from version 1
/// (88 bytes: the first 88 of version 2, the two flag/reserved bytes both reserved) to version 2 when the attitude
/// accuracies and the relative attitude were added. The writer writes each kind's latest version; the reader also
/// reads device motion's version 1 (an older agent, a recording).
///
/// `BinaryBatchWriter` writes it, `BinaryBatchReader` reads it; clients/python decodes the same bytes.
public enum BinaryBatchLayout {
    public enum Kind: UInt8, Sendable, Hashable, CaseIterable {
        case accelerometer = 1
        case gyroscope = 2
        case magnetometer = 3
        case deviceMotion = 4

        /// The record layout version the writer writes for this kind: its latest.
        public var version: UInt8 { self == .deviceMotion ? 2 : 1 }

        /// Bytes per record in the version the writer writes (`version`).
        public var recordSize: Int { recordSize(version: version) ?? 0 }

        /// Bytes per record in `version` of this kind's layout; nil for a version it never had.
        public func recordSize(version: UInt8) -> Int? {
            switch (self, version) {
            case (.deviceMotion, 1): 88
            case (.deviceMotion, 2): 120
            case (.deviceMotion, _): nil
            case (_, 1): 28
            default: nil
            }
        }

        /// The versions a reader of this layout accepts for this kind, oldest first.
        public var readableVersions: ClosedRange<UInt8> { 1...version }

        /// The record kind of a payload that batches; nil for the payloads that are never batched (a test checks
        /// this against the streams' `StreamDescriptor.batches`).
        public init?(payload: PayloadKind) {
            switch payload {
            case .accelerometer: self = .accelerometer
            case .gyroscope: self = .gyroscope
            case .magnetometer: self = .magnetometer
            case .deviceMotion: self = .deviceMotion
            default: return nil
            }
        }
    }

    public static let magic: (UInt8, UInt8, UInt8) = (0x4D, 0x41, 0x42)
    public static let headerSize = 16
    /// Offset of the u8 version in the header.
    public static let versionOffset = 3
    /// Offset of the u16 record count in the header.
    public static let countOffset = 6
    /// Offset of the u64 seq of the first record in the header.
    public static let firstSeqOffset = 8
    /// A u16 count: at most this many records per batch.
    public static let maximumCount = Int(UInt16.max)

    /// Offsets inside a device-motion record (version 2; version 1 is the first 88 bytes, with `flags` and the
    /// byte after it reserved).
    public enum DeviceMotionField {
        public static let accuracy = 84
        public static let referenceFrame = 85
        public static let flags = 86
        public static let reserved = 87
        public static let inclinationAccuracy = 88
        public static let headingAccuracy = 92
        public static let relativeQuaternion = 96
        public static let referenceTime = 112
        /// `flags` bit 0: the record carries a relative attitude (a reference attitude was set).
        public static let relativeAttitudePresent: UInt8 = 1
    }

    /// The accuracy byte of a device-motion record.
    public static func code(of accuracy: MagneticFieldAccuracy) -> UInt8 {
        switch accuracy {
        case .uncalibrated: 0
        case .low: 1
        case .medium: 2
        case .high: 3
        }
    }

    /// The reference-frame byte of a device-motion record.
    public static func code(of frame: AttitudeReferenceFrame) -> UInt8 {
        switch frame {
        case .xArbitraryZVertical: 0
        case .xArbitraryCorrectedZVertical: 1
        case .xMagneticNorthZVertical: 2
        case .xTrueNorthZVertical: 3
        }
    }

    public static func accuracy(code: UInt8) -> MagneticFieldAccuracy? {
        MagneticFieldAccuracy.allCases.first { Self.code(of: $0) == code }
    }

    public static func referenceFrame(code: UInt8) -> AttitudeReferenceFrame? {
        AttitudeReferenceFrame.allCases.first { Self.code(of: $0) == code }
    }
}

extension PayloadKind {
    /// The record layout of its binary batches; nil for payloads that are never batched.
    public var binaryKind: BinaryBatchLayout.Kind? { BinaryBatchLayout.Kind(payload: self) }
}
