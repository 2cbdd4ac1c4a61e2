import MotionModel

/// Where a source hands its samples. Called on the source's acquisition thread, for every sample, in
/// timestamp order per device; implementations must not block and must not allocate per sample.
package protocol SampleSink: AnyObject, Sendable {
    func ingest(_ sample: IMUSample)
    func report(_ fault: SourceFault)
}
