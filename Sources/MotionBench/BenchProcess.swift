#if canImport(Glibc)
import Glibc
#endif

/// A child process started with posix_spawn and an empty signal mask.
///
/// Foundation's `Process` passes on the spawning thread's signal mask, and the bench spawns from Swift
/// concurrency threads, which block SIGTERM: mosquitto and motion-agent would then never see SIGTERM.
final class BenchProcess {
    let pid: pid_t
    private var exited = false

    struct SpawnError: Error, CustomStringConvertible {
        var description: String
    }

    /// - Parameter output: file that receives the child's stdout and stderr.
    init(_ executable: String, _ arguments: [String], output: String = "/dev/null") throws {
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var empty = sigset_t()
        sigemptyset(&empty)
        var all = sigset_t()
        sigfillset(&all)
        posix_spawnattr_setsigmask(&attributes, &empty)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, output, O_WRONLY | O_CREAT | O_APPEND, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { for p in argv { free(p) } }
        var child: pid_t = 0
        let rc = argv.withUnsafeBufferPointer { pointer in
            posix_spawn(&child, executable, &actions, &attributes, pointer.baseAddress!, environ)
        }
        guard rc == 0 else {
            throw SpawnError(description: "cannot start \(executable): \(String(cString: strerror(rc)))")
        }
        pid = child
    }

    var isRunning: Bool {
        if exited { return false }
        var status: Int32 = 0
        if waitpid(pid, &status, WNOHANG) == pid { exited = true }
        return !exited
    }

    /// SIGTERM, then SIGKILL after `grace` seconds; reaps the child.
    func terminate(grace: Double = 5) {
        guard isRunning else { return }
        kill(pid, SIGTERM)
        var waited = 0.0
        while isRunning && waited < grace {
            usleep(10_000)
            waited += 0.01
        }
        if isRunning {
            kill(pid, SIGKILL)
            var status: Int32 = 0
            waitpid(pid, &status, 0)
            exited = true
        }
    }

    deinit { terminate() }
}
