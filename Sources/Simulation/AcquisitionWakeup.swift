#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A sleep until a monotonic deadline that another thread can cut short: the acquisition thread sleeps until
/// its next sample and wakes early only when the plan changes or the source stops. Before it, the thread woke
/// every 50 ms to look at both, which at the fleet bench's 1.6 Hz plan was 20 of an idle agent's ~42 wake-ups a
/// second (BENCHMARKS.md, "Fleet convergence").
///
/// `@unchecked Sendable`: the condition variable and its mutex are only touched through pthread calls, and the
/// pending flag only under that mutex, which this class owns.
final class AcquisitionWakeup: @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    /// A wake that came while nobody slept: the next sleep returns at once.
    private var pending = false

    init() {
        pthread_mutex_init(mutex, nil)
        #if canImport(Glibc)
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        pthread_cond_init(condition, &attributes)
        pthread_condattr_destroy(&attributes)
        #else
        pthread_cond_init(condition, nil)
        #endif
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        condition.deallocate()
        mutex.deallocate()
    }

    /// Sleeps until CLOCK_MONOTONIC reads `deadline` (s), or until `wake()`; a wake since the last sleep returns
    /// at once.
    func sleep(until deadline: Double) {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        #if canImport(Glibc)
        var seconds = deadline.rounded(.down)
        var nanoseconds = ((deadline - seconds) * 1e9).rounded()
        if nanoseconds >= 1e9 {
            seconds += 1
            nanoseconds -= 1e9
        }
        var ts = timespec(tv_sec: Int(seconds), tv_nsec: Int(nanoseconds))
        // Spurious wake-ups return early too; the loop recomputes its deadline and sleeps again.
        while !pending && pthread_cond_timedwait(condition, mutex, &ts) == 0 {}
        #else
        let remaining = deadline - MonotonicClock.now()
        if !pending && remaining > 0 {
            pthread_mutex_unlock(mutex)
            usleep(UInt32(min(remaining, 0.05) * 1e6))
            pthread_mutex_lock(mutex)
        }
        #endif
        pending = false
    }

    func wake() {
        pthread_mutex_lock(mutex)
        pending = true
        pthread_cond_signal(condition)
        pthread_mutex_unlock(mutex)
    }
}
