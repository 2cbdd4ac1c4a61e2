import Synchronization

/// A value shared between the services and closures they hand out (the boot count).
final class SharedCounter: Sendable {
    private let storage = Atomic<UInt64>(0)
    var value: UInt64 {
        get { storage.load(ordering: .relaxed) }
        set { storage.store(newValue, ordering: .relaxed) }
    }
}
