internal import CLibIIO
import Dispatch
import Synchronization

/// The control path's handle on one acquisition thread: stop it, or wake it for a new plan, interrupting a
/// refill that may be waiting on the hardware.
final class WorkerControl: Sendable {
    private struct State {
        var stopped = false
        /// The buffer being refilled, so `iio_buffer_cancel` (thread-safe per libiio) can interrupt it. It is
        /// only cancelled under this lock and only destroyed after being cleared under it.
        var buffer: BufferHandle?
    }

    /// An `iio_buffer` pointer crossing from the acquisition thread to the control path. Sendable by
    /// construction: the only cross-thread use is `iio_buffer_cancel`, which libiio documents as thread-safe.
    struct BufferHandle: @unchecked Sendable {
        let pointer: OpaquePointer
    }

    private let state = Mutex(State())
    private let wake = DispatchSemaphore(value: 0)

    var isStopped: Bool { state.withLock { $0.stopped } }

    func stop() {
        state.withLock { s in
            s.stopped = true
            if let buffer = s.buffer { iio_buffer_cancel(buffer.pointer) }
        }
        wake.signal()
    }

    /// The plan changed: leave the refill and the wait now.
    func poke() {
        state.withLock { s in
            if let buffer = s.buffer { iio_buffer_cancel(buffer.pointer) }
        }
        wake.signal()
    }

    /// Returns false (and registers nothing) when already stopped.
    func register(buffer: OpaquePointer) -> Bool {
        state.withLock { s in
            guard !s.stopped else { return false }
            s.buffer = BufferHandle(pointer: buffer)
            return true
        }
    }

    func unregisterBuffer() {
        state.withLock { $0.buffer = nil }
    }

    /// Sleeps up to `seconds`; returns early when stopped or poked.
    func sleep(seconds: Double) {
        guard seconds > 0 else { return }
        _ = wake.wait(timeout: .now() + .nanoseconds(Int(seconds * 1e9)))
    }
}
