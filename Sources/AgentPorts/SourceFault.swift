import MotionModel

/// A problem the source met while acquiring; the source keeps going (or retries) and reports it here so
/// status and the log can say so.
public struct SourceFault: Sendable, Hashable {
    public var deviceID: String
    public var message: String
    /// `false` while the device is failing, `true` once it delivers again.
    public var recovered: Bool

    public init(deviceID: String, message: String, recovered: Bool) {
        self.deviceID = deviceID
        self.message = message
        self.recovered = recovered
    }
}
