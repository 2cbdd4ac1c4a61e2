import MotionModel

/// A problem the source met while acquiring; the source keeps going (or retries) and reports it here so
/// status and the log can say so.
package struct SourceFault: Sendable, Hashable {
    package var deviceID: String
    package var message: String
    /// `false` while the device is failing, `true` once it delivers again.
    package var recovered: Bool

    package init(deviceID: String, message: String, recovered: Bool) {
        self.deviceID = deviceID
        self.message = message
        self.recovered = recovered
    }
}
