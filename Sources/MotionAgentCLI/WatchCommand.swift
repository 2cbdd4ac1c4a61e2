import AgentPorts
import ArgumentParser
import Foundation
import Logging
import MosquittoTransport
import MotionWire
import Synchronization

/// `motion-agent watch DEVICE`: a live terminal view of a device's streams.
struct WatchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "watch",
        abstract: "Show a device's streams live: latest values, rates, sparklines of acceleration and attitude.",
        discussion: "Redraws about 5 times a second; q or Ctrl-C quits."
    )

    @OptionGroup var broker: BrokerOptions
    @Flag(help: "Print one frame after --seconds of data and exit (no escapes), for scripts and tests.") var once =
        false
    @Option(help: "With --once: seconds of data to collect first.") var seconds: Double = 3
    @Argument(help: "The device id (device.id).") var device: String

    /// ~5 frames a second: smooth enough to follow, cheap on a small board.
    static let frameInterval = Duration.milliseconds(200)

    func run() async throws {
        let topics = broker.topics(device: device)
        let client = MosquittoClient(logger: Logger(label: "motion-agent.watch"))
        try client.connect(
            try broker.connectOptions(clientID: "motion-watch-\(UUID().uuidString.prefix(8).lowercased())")
        )
        try await awaitConnection(client, timeout: 10)
        try client.subscribe([topics.everything], qos: 0)
        let state = WatchState(topics: topics)
        let terminal = once ? nil : TerminalMode()
        if !once {
            Self.readKeys(into: state)
            print("\u{1B}[?1049h\u{1B}[?25l", terminator: "")  // alternate screen, hidden cursor
        }
        defer {
            if !once { print("\u{1B}[?25h\u{1B}[?1049l", terminator: "") }
            fflush(nil)
            terminal?.restore()
        }
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                for await event in client.events {
                    guard case .message(let m) = event else { continue }
                    let t = state.now()
                    state.model.withLock { $0.receive(topic: m.topic, payload: m.payload, now: t) }
                }
            }
            await draw(state)
            group.cancelAll()
        }
        await client.disconnect(flushTimeout: 1)
    }

    /// Until `q` or Ctrl-C: redraw in place. With `--once`: collect, then print one plain frame.
    private func draw(_ state: WatchState) async {
        let width = Self.terminalWidth()
        if once {
            for _ in 0..<max(1, Int((seconds * 5).rounded())) {
                guard (try? await Task.sleep(for: Self.frameInterval)) != nil else { return }
                let t = state.now()
                state.model.withLock { $0.tick(now: t) }
            }
            let t = state.now()
            // Every line carries device text (stream names, summaries, state): through Printable.
            print(
                state.model.withLock { $0.render(now: t, width: width) }.map { Printable.text($0, limit: 4096) }
                    .joined(separator: "\n")
            )
            return
        }
        while !state.quit.load(ordering: .relaxed) {
            let t = state.now()
            let lines = state.model.withLock { model in
                model.tick(now: t)
                return model.render(now: t, width: width)
            }
            // Home, each line followed by erase-to-end-of-line, then erase below: no flicker from a full clear.
            print(
                "\u{1B}[H" + lines.map { $0 + "\u{1B}[K" }.joined(separator: "\n") + "\n\u{1B}[J(q quits)",
                terminator: ""
            )
            fflush(nil)
            guard (try? await Task.sleep(for: Self.frameInterval)) != nil else { return }
        }
    }

    /// Reads keys on a thread of its own (a blocking read must not hold a task's thread); `q` or Ctrl-C quit.
    private static func readKeys(into state: WatchState) {
        let thread = Thread {
            var byte: UInt8 = 0
            while read(STDIN_FILENO, &byte, 1) == 1 {
                if byte == UInt8(ascii: "q") || byte == UInt8(ascii: "Q") || byte == 3 {
                    state.quit.store(true, ordering: .relaxed)
                    return
                }
            }
        }
        thread.start()
    }

    private static func terminalWidth() -> Int {
        var size = winsize()
        if ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 { return Int(size.ws_col) }
        return 200
    }
}

/// The model behind its lock, the quit flag and the clock, shared by the subscriber, the key reader and the
/// drawing loop.
final class WatchState: Sendable {
    let model: Mutex<WatchModel>
    let quit = Atomic<Bool>(false)
    private let start = ContinuousClock.now

    init(topics: TopicScheme) { model = Mutex(WatchModel(topics: topics)) }

    /// Monotonic seconds since the view started.
    func now() -> Double {
        let (s, atto) = (ContinuousClock.now - start).components
        return Double(s) + Double(atto) / 1e18
    }
}
