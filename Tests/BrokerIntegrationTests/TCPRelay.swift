import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A TCP relay on 127.0.0.1 in front of the broker, so a test can cut a client's connection the way a
/// network failure does: `cut()` shuts both sockets down, the broker sees end-of-file without a DISCONNECT
/// (and publishes the will) and the client sees its connection drop. One thread accepts, two per
/// connection copy bytes; blocking sockets keep it short.
final class TCPRelay: Sendable {
    let port: Int
    private let listener: Int32
    private let connections = ConnectionList()

    private final class ConnectionList: Sendable {
        let list = Mutex<[RelayedConnection]>([])
    }

    /// Two descriptors, closed by whichever copy thread finishes last; `shutDown` and `close` share a lock
    /// so a descriptor number is never shut down after it was closed (and possibly reused elsewhere).
    private final class RelayedConnection: Sendable {
        let client: Int32
        let upstream: Int32
        private let state = Mutex<(finishedCopies: Int, closed: Bool)>((0, false))

        init(client: Int32, upstream: Int32) {
            self.client = client
            self.upstream = upstream
        }

        func shutDown() {
            state.withLock { state in
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
                state.finishedCopies += 1
                if state.finishedCopies == 2 {
                    state.closed = true
                    close(client)
                    close(upstream)
                }
            }
        }
    }

    struct RelayError: Error, CustomStringConvertible {
        var description: String
    }

    init(targetPort: Int) throws {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        self.listener = listener
        guard listener >= 0 else { throw RelayError(description: "socket: \(String(cString: strerror(errno)))") }
        var address = Self.loopback(port: 0)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(listener, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0, listen(listener, 8) == 0 else {
            close(listener)
            throw RelayError(description: "bind/listen: \(String(cString: strerror(errno)))")
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &length) }
        }
        port = Int(UInt16(bigEndian: address.sin_port))
        let connections = self.connections
        Thread {
            while true {
                let client = accept(listener, nil, nil)
                if client < 0 {
                    if errno == EINTR { continue }
                    // deinit shut the listener down; this thread owns the close.
                    close(listener)
                    return
                }
                let upstream = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
                var target = TCPRelay.loopback(port: targetPort)
                let connected = withUnsafePointer(to: &target) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                        connect(upstream, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                    }
                }
                let connection = RelayedConnection(client: client, upstream: upstream)
                connections.list.withLock { $0.append(connection) }
                if connected != 0 {
                    connection.copyFinished()
                    connection.copyFinished()
                    continue
                }
                Thread {
                    TCPRelay.copy(from: client, to: upstream)
                    connection.copyFinished()
                }.start()
                Thread {
                    TCPRelay.copy(from: upstream, to: client)
                    connection.copyFinished()
                }.start()
            }
        }.start()
    }

    deinit {
        shutdown(listener, Int32(SHUT_RDWR))
        cut()
    }

    /// Ends every relayed connection at once, without any MQTT packet.
    func cut() {
        for connection in connections.list.withLock({ $0 }) { connection.shutDown() }
    }

    private static func copy(from source: Int32, to destination: Int32) {
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(source, $0.baseAddress, $0.count) }
            if count <= 0 { return }
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
