import MotionModel

extension AgentStatus {
    /// Device motion's reference attitude as the status shows it: the quaternion (in the stream's reference
    /// frame, device → frame, normalised) and when it was set, Unix seconds.
    public struct ReferenceAttitude: Sendable, Codable, Equatable {
        public var quaternion: Quaternion
        public var time: Double

        public init(quaternion: Quaternion, time: Double) {
            self.quaternion = quaternion
            self.time = time
        }

        public init(_ reference: MotionModel.ReferenceAttitude) {
            self.init(quaternion: reference.quaternion, time: reference.time)
        }
    }
}
