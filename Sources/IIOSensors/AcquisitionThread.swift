#if canImport(Glibc)
import Glibc
#endif

/// A dedicated OS thread per device: libiio's refill blocks, so it must not run on the Swift concurrency pool.
enum AcquisitionThread {
    private final class Body {
        let run: @Sendable () -> Void
        init(_ run: @escaping @Sendable () -> Void) { self.run = run }
    }

    /// Starts a detached thread running `body`. The closure travels as a retained `Unmanaged` pointer that the
    /// thread takes back (released when `body` returns).
    static func start(name: String, _ body: @escaping @Sendable () -> Void) throws(IIOError) {
        let context = Unmanaged.passRetained(Body(body)).toOpaque()
        var thread = pthread_t()
        let rc = pthread_create(
            &thread,
            nil,
            { argument in
                let body = Unmanaged<Body>.fromOpaque(argument!).takeRetainedValue()
                body.run()
                return nil
            },
            context
        )
        guard rc == 0 else {
            Unmanaged<Body>.fromOpaque(context).release()
            throw IIOError(
                operation: "start the acquisition thread \(name)",
                errno: rc,
                fix: "the system is out of threads or memory"
            )
        }
        pthread_detach(thread)
    }
}
