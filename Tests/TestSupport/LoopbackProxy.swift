import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A TCP proxy on 127.0.0.1 in front of mosquitto (one per contract client, or in front of one test's client),
/// standing in for the network: `cut()` ends its connections without an MQTT packet (the broker publishes the will,
/// the client sees its connection lost), and `stall` holds the bytes of one direction (a peer that stops reading, a hung path) until released.
/// It accepts again after a cut, and survives broker restarts (it dials the broker per accepted connection).
/// One thread accepts, two per connection copy; blocking sockets keep it short.
package final class LoopbackProxy: Sendable {
    package let port: Int
    private let listener: Int32
    private let shared = Shared()

    private final class Shared: Sendable {
        let state = Mutex(State())
    }

    private struct State {
        var connections: [Relayed] = []
        var stalledTowardsBroker = false
        var stalledTowardsClient = false
    }

    /// Two descriptors, shut down together and closed by whichever copy thread finishes last.
    private final class Relayed: Sendable {
        let client: Int32
        let upstream: Int32
        private let state = Mutex<(finished: Int, closed: Bool, cut: Bool)>((0, false, false))

        init(client: Int32, upstream: Int32) {
            self.client = client
            self.upstream = upstream
        }

        var isClosed: Bool { state.withLock { $0.closed || $0.cut || $0.finished > 0 } }

        func shutDown() {
            state.withLock { state in
                state.cut = true
                guard !state.closed else { return }
                shutdown(client, Int32(SHUT_RDWR))
                shutdown(upstream, Int32(SHUT_RDWR))
            }
        }

        func copyFinished() {
            state.withLock { state in
                guard !state.closed else { return }
                shutdown(client, Int32(SHUT_RDWR))
                shutdown(upstream, Int32(SHUT_RDWR))
                state.finished += 1
                if state.finished == 2 {
                    state.closed = true
                    close(client)
                    close(upstream)
                }
            }
        }
    }

    package struct ProxyError: Error, CustomStringConvertible {
        package var description: String
    }

    package init(targetPort: Int) throws {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard listener >= 0 else { throw ProxyError(description: "socket: \(String(cString: strerror(errno)))") }
        self.listener = listener
        var address = Self.loopback(port: 0)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(listener, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0, listen(listener, 8) == 0 else {
            close(listener)
            throw ProxyError(description: "bind/listen: \(String(cString: strerror(errno)))")
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &length) }
        }
        port = Int(UInt16(bigEndian: address.sin_port))
        let shared = self.shared
        Thread {
            while true {
                let client = accept(listener, nil, nil)
                if client < 0 {
                    if errno == EINTR { continue }
                    close(listener)
                    return
                }
                let upstream = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
                var target = LoopbackProxy.loopback(port: targetPort)
                let connected = withUnsafePointer(to: &target) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                        connect(upstream, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                    }
                }
                let relayed = Relayed(client: client, upstream: upstream)
                shared.state.withLock { $0.connections.append(relayed) }
                if connected != 0 {
                    relayed.copyFinished()
                    relayed.copyFinished()
                    continue
                }
                Thread {
                    LoopbackProxy.copy(from: client, to: upstream, relayed: relayed) {
                        shared.state.withLock { $0.stalledTowardsBroker }
                    }
                    relayed.copyFinished()
                }.start()
                Thread {
                    LoopbackProxy.copy(from: upstream, to: client, relayed: relayed) {
                        shared.state.withLock { $0.stalledTowardsClient }
                    }
                    relayed.copyFinished()
                }.start()
            }
        }.start()
    }

    deinit {
        shutdown(listener, Int32(SHUT_RDWR))
        cut()
    }

    /// Ends every connection at once, without any MQTT packet; bytes held by a stall are lost with it.
    package func cut() {
        let connections = shared.state.withLock { state in
            defer { state.connections.removeAll() }
            return state.connections
        }
        for connection in connections { connection.shutDown() }
    }

    /// Holds (true) or releases the bytes of each direction.
    package func stall(towardsBroker: Bool, towardsClient: Bool) {
        shared.state.withLock { state in
            state.stalledTowardsBroker = towardsBroker
            state.stalledTowardsClient = towardsClient
        }
    }

    /// Copies until either side closes. A chunk read while the direction is stalled waits until it is released
    /// (or the connection is cut), so nothing passes a stall once it is set.
    private static func copy(from source: Int32, to destination: Int32, relayed: Relayed, stalled: () -> Bool) {
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            while stalled() && !relayed.isClosed { usleep(1000) }
            let count = buffer.withUnsafeMutableBytes { read(source, $0.baseAddress, $0.count) }
            if count <= 0 { return }
            while stalled() && !relayed.isClosed { usleep(1000) }
            var offset = 0
            while offset < count {
                let written = buffer.withUnsafeBytes {
                    send(destination, $0.baseAddress! + offset, count - offset, Int32(MSG_NOSIGNAL))
                }
                if written <= 0 { return }
                offset += written
            }
        }
    }

    private static func loopback(port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return address
    }
}
