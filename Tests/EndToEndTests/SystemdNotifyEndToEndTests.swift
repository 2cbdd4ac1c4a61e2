import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// sd_notify as systemd's Type=notify and WatchdogSec= see it: a datagram socket the agent reports to.
@Suite(.timeLimit(.minutes(5))) struct SystemdNotifyEndToEndTests {
    /// A bound AF_UNIX datagram socket standing in for systemd's notify socket (the protocol is the socket).
    final class NotifySocket {
        let path: String
        let fd: Int32

        init() throws {
            path = NSTemporaryDirectory() + "notify-\(UUID().uuidString.prefix(8)).sock"
            fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
            var address = sockaddr_un()
            address.sun_family = sa_family_t(AF_UNIX)
            let bytes = Array(path.utf8)
            withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }
            let rc = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
                }
            }
            guard fd >= 0, rc == 0 else { throw MissingBinary(path: "notify socket \(path): errno \(errno)") }
        }

        deinit {
            close(fd)
            unlink(path)
        }

        /// The next datagram within `timeout` seconds.
        func receive(timeout: Double) -> String? {
            var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&p, 1, Int32(timeout * 1000)) > 0 else { return nil }
            var buffer = [UInt8](repeating: 0, count: 4096)
            let n = recv(fd, &buffer, buffer.count, 0)
            return n > 0 ? String(decoding: buffer[0..<n], as: UTF8.self) : nil
        }
    }

    @Test func readyWatchdogAndStoppingReachSystemd() async throws {
        let broker = try await MosquittoBroker.started()
        let notify = try NotifySocket()
        let agent = try AgentProcess(
            config: AgentProcess.config(device: "e2e-notify", port: broker.port),
            environment: ["NOTIFY_SOCKET": notify.path, "WATCHDOG_USEC": "1000000"]
        )
        defer { agent.runner.kill() }
        var messages: [String] = []
        let deadline = Date().addingTimeInterval(15)
        while Date() < deadline, messages.filter({ $0.contains("WATCHDOG=1") }).count < 2 {
            if let m = notify.receive(timeout: 1) { messages.append(m) }
        }
        #expect(messages.first?.hasPrefix("READY=1") == true, "\(messages)")
        #expect(
            messages.filter { $0.contains("WATCHDOG=1") }.count >= 2,
            "keep-alives every WATCHDOG_USEC/2: \(messages)"
        )
        agent.runner.terminate()
        var stopping = false
        let end = Date().addingTimeInterval(10)
        while Date() < end, !stopping {
            if let m = notify.receive(timeout: 1) { stopping = m.contains("STOPPING=1") }
        }
        #expect(stopping)
        #expect(await agent.runner.waitForExit(timeout: 15) == 0)
    }
}
