import MotionModel

/// The binary batch layout, version 1 ("MAB v1", docs/payloads.md "Batched streams"), all little-endian:
/// - header, 16 bytes: `"MAB"` (0x4D 0x41 0x42), version u8 = 1, kind u8 (1 accelerometer, 2 gyroscope,
///   3 magnetometer, 4 device-motion), reserved u8 = 0, count u16, seq of the first sample u64;
/// - then `count` records: raw sensors 28 bytes — timestamp f64 (s, sensor clock), time f64 (Unix s), x, y, z
///   f32 (g, rad/s or µT); device motion 88 bytes — timestamp f64, time f64, quaternion x, y, z, w f32,
///   rotationRate xyz f32, gravity xyz f32, userAcceleration xyz f32, magneticField xyz f32, heading f32,
///   accuracy u8 (0 uncalibrated … 3 high), referenceFrame u8 (0 xArbitraryZVertical, 1 …CorrectedZVertical,
///   2 xMagneticNorthZVertical, 3 xTrueNorthZVertical), reserved u16.
///
/// `BinaryBatchWriter` writes it, `BinaryBatchReader` reads it; clients/python decodes the same bytes.
public enum BinaryBatchLayout {
    public enum Kind: UInt8, Sendable, Hashable, CaseIterable {
        case accelerometer = 1
        case gyroscope = 2
        case magnetometer = 3
        case deviceMotion = 4

        /// Bytes per record.
        public var recordSize: Int { self == .deviceMotion ? 88 : 28 }
    }

    public static let magic: (UInt8, UInt8, UInt8) = (0x4D, 0x41, 0x42)
    public static let version: UInt8 = 1
    public static let headerSize = 16
    /// Offset of the u16 record count in the header.
    public static let countOffset = 6
    /// Offset of the u64 seq of the first record in the header.
    public static let firstSeqOffset = 8
    /// A u16 count: at most this many records per batch.
    public static let maximumCount = Int(UInt16.max)

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
