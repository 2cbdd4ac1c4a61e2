import Synchronization

/// The running workers by device id, so `apply` can wake the ones whose plan changed.
final class ActiveWorkers: Sendable {
    private let map = Mutex<[String: IIODeviceWorker]>([:])

    func withLock<R>(_ body: (inout [String: IIODeviceWorker]) -> R) -> R {
        map.withLock { body(&$0) }
    }
}
