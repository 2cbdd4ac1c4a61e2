import AgentPorts
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// sd_notify(3) without libsystemd: one datagram to `$NOTIFY_SOCKET` (a path, or an abstract socket written
/// with a leading `@`). Under systemd with `Type=notify` this says READY once the agent runs, WATCHDOG while it
/// is healthy (`WatchdogSec=`), STOPPING at shutdown. Outside systemd there is no socket and it does nothing.
package struct SystemdNotifier: Sendable {
    package let socketPath: String?
    /// Half of `$WATCHDOG_USEC`, the keep-alive period systemd expects; nil without a watchdog.
    package let watchdogInterval: Double?

    package init(environment: [String: String] = ProcessInfo.processInfo.environment) {
        let path = environment["NOTIFY_SOCKET"].flatMap { $0.isEmpty ? nil : $0 }
        socketPath = path
        if path != nil, let usec = environment["WATCHDOG_USEC"].flatMap(Double.init), usec > 0,
            environment["WATCHDOG_PID"].map({ Int32($0) == getpid() }) ?? true
        {
            watchdogInterval = usec / 2e6
        } else {
            watchdogInterval = nil
        }
    }

    /// Sends `state` (e.g. "READY=1\nSTATUS=…"). Returns false when not under systemd or the send failed.
    @discardableResult
    package func notify(_ state: String) -> Bool {
        #if canImport(Glibc)
        guard let socketPath else { return false }
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        var pathBytes = Array(socketPath.utf8)
        // An abstract socket is named with a leading NUL, written "@" in the variable.
        if pathBytes.first == UInt8(ascii: "@") { pathBytes[0] = 0 }
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard pathBytes.count < capacity else { return false }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: pathBytes)
        }
        let length = socklen_t(MemoryLayout<sa_family_t>.size + pathBytes.count)
        let sent = state.utf8CString.withUnsafeBufferPointer { message in
            withUnsafePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
                    sendto(fd, message.baseAddress, message.count - 1, Int32(MSG_NOSIGNAL), socketAddress, length)
                }
            }
        }
        return sent >= 0
        #else
        return false
        #endif
    }
}
