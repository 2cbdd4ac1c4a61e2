import ArgumentParser
import Dispatch

/// The process entry point: the command runs on the global executor while the main thread waits for it.
///
/// Swift's async `main` would instead park the main thread in `dispatch_main()`, which ends it with
/// `pthread_exit()`; that forced unwind walks the main thread's stack once and pages in ~0.6 MB of unwind
/// tables (`.eh_frame_hdr`, `.eh_frame`) that then stay resident for the agent's whole life. Nothing in the
/// agent runs on the main actor, so the main thread has nothing else to do — and the command is started
/// detached, because `main` itself is main-actor isolated and a plain `Task` would wait for this thread.
@main
enum MotionAgentMain {
    static func main() {
        let finished = DispatchSemaphore(value: 0)
        Task.detached {
            await MotionAgentCommand.main()
            finished.signal()
        }
        finished.wait()
    }
}
