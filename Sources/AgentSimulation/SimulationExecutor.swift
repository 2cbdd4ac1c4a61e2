import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Runs every job of a simulation on one thread, one at a time, in the order they were enqueued: the agent's
/// real service graph (tasks, task groups, actors, continuations) becomes a deterministic program of its seed.
///
/// Two doors lead here. Tasks started with this executor as their preference (`Task(executorPreference:)`, and
/// their child tasks) enqueue here directly. Unstructured tasks that code inside the simulation starts without a
/// preference — swift-service-lifecycle's cancellation waiter, the agent's own timers — would go to the global
/// concurrent pool and run on another thread at a time of their own; while `run(_:)` is on the stack, the
/// runtime's global-enqueue hook sends every job enqueued *from this thread* here instead. Jobs enqueued from
/// other threads (other tests in the same process) go to the global pool as before.
///
/// Every task the simulation starts has this executor as its preference, so a continuation resumed from outside a
/// step (a test calling `broker.stop()` between two `run`s) still queues its task's job here, in call order. A job
/// that reaches the queue from another thread *while the simulation runs* means something in the simulated agent
/// escaped the virtual world (a real timer, a thread of its own): it is still run here, in arrival order, and
/// counted in `foreignEnqueues`, which the simulation reports as a determinism failure.
package final class SimulationExecutor: TaskExecutor, @unchecked Sendable {
    // The queue is locked because a foreign thread may still enqueue (and is counted); the simulation itself
    // only ever touches it from its own thread.
    private let queue = Mutex(Queue())
    private let owner = Atomic<UInt>(0)

    private struct Queue {
        var jobs: [UnownedJob] = []
        var head = 0
        var foreign = 0
        var ran = 0
    }

    package init() {
        Self.installHook()
    }

    package func enqueue(_ job: consuming ExecutorJob) {
        accept(UnownedJob(job))
    }

    private func accept(_ job: UnownedJob) {
        let running = owner.load(ordering: .acquiring)
        let foreign = running != 0 && running != UInt(bitPattern: Int(bitPattern: pthread_self()))
        queue.withLock { queue in
            if foreign { queue.foreign += 1 }
            queue.jobs.append(job)
        }
    }

    /// Jobs that arrived from a thread other than the simulation's while it ran.
    package var foreignEnqueues: Int { queue.withLock { $0.foreign } }

    /// Jobs run so far.
    package var jobsRun: Int { queue.withLock { $0.ran } }

    /// Whether a job waits.
    package var hasWork: Bool { queue.withLock { $0.head < $0.jobs.count } }

    /// Makes this thread the simulation's for the duration of `body`: jobs enqueued from it come here.
    package func run<Result>(_ body: () throws -> Result) rethrows -> Result {
        let previous = pthread_getspecific(Self.key)
        let previousOwner = owner.load(ordering: .acquiring)
        pthread_setspecific(Self.key, Unmanaged.passUnretained(self).toOpaque())
        owner.store(UInt(bitPattern: Int(bitPattern: pthread_self())), ordering: .releasing)
        defer {
            owner.store(previousOwner, ordering: .releasing)
            pthread_setspecific(Self.key, previous)
        }
        return try body()
    }

    /// Runs queued jobs, and the jobs they enqueue, until none is left (or `limit` ran); returns how many ran.
    /// Call inside `run(_:)`.
    @discardableResult
    package func runUntilIdle(limit: Int = .max) -> Int {
        var count = 0
        while count < limit {
            let next: UnownedJob? = queue.withLock { queue in
                guard queue.head < queue.jobs.count else {
                    queue.jobs.removeAll(keepingCapacity: true)
                    queue.head = 0
                    return nil
                }
                let job = queue.jobs[queue.head]
                queue.head += 1
                queue.ran += 1
                return job
            }
            guard let job = next else { break }
            job.runSynchronously(on: asUnownedTaskExecutor())
            count += 1
        }
        return count
    }

    // MARK: The global-enqueue hook

    private typealias Original = @convention(thin) (UnownedJob) -> Void
    private typealias Hook = @convention(thin) (UnownedJob, Original) -> Void

    /// The simulation executor that owns the current thread, if any.
    nonisolated(unsafe) private static var key = pthread_key_t()
    private static let installed = Mutex(false)

    private static func installHook() {
        installed.withLock { installed in
            guard !installed else { return }
            installed = true
            pthread_key_create(&key, nil)
            guard let symbol = dlsym(dlopen(nil, RTLD_NOW), "swift_task_enqueueGlobal_hook") else {
                // Without the hook, only tasks with this executor as their preference are simulated; the
                // foreign-enqueue count says when that was not enough.
                return
            }
            let hook = symbol.assumingMemoryBound(to: Hook?.self)
            hook.pointee = { job, original in
                if let raw = pthread_getspecific(SimulationExecutor.key) {
                    Unmanaged<SimulationExecutor>.fromOpaque(raw).takeUnretainedValue().accept(job)
                } else {
                    original(job)
                }
            }
        }
    }
}
