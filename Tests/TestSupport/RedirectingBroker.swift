import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A listener on 127.0.0.1 that answers every MQTT 5 CONNECT with a CONNACK refusing it — reason 0x9C "use
/// another server" (or 0x9D "server moved") — carrying a Server Reference property (0x1C), then closes.
///
/// No broker installable here sends a Server Reference (mosquitto 2.0 and RabbitMQ 3.10 never do), so this is
/// the one fake in the broker tests: the bytes are MQTT 5 §3.2's, and the client reading them is the real
/// libmosquitto.
package final class RedirectingBroker: Sendable {
    package let port: Int
    /// Connections answered so far.
    package var redirected: Int { count.load(ordering: .relaxed) }

    private let listener: Int32
    private let count = Atomic<Int>(0)
    private let stopped = Atomic<Bool>(false)

    package struct Failure: Error, CustomStringConvertible {
        package var description: String
    }

    /// - Parameters:
    ///   - reference: the Server Reference, as written in the CONNACK (e.g. `127.0.0.1:1884`).
    ///   - reasonCode: 0x9C use another server, or 0x9D server moved.
    package init(reference: String, reasonCode: UInt8 = 0x9C) throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw Failure(description: "socket: \(String(cString: strerror(errno)))") }
        var yes: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0, listen(fd, 8) == 0 else {
            close(fd)
            throw Failure(description: "bind/listen: \(String(cString: strerror(errno)))")
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        listener = fd
        port = Int(UInt16(bigEndian: address.sin_port))
        let connack = Self.connack(reasonCode: reasonCode, reference: reference)
        let thread = Thread { [self] in self.acceptLoop(connack) }
        thread.name = "redirecting-broker"
        thread.start()
    }

    /// Stops accepting (the accept loop ends at its next wake-up).
    package func stop() {
        stopped.store(true, ordering: .relaxed)
        shutdown(listener, Int32(SHUT_RDWR))
    }

    deinit {
        close(listener)
    }

    /// CONNACK (MQTT 5 §3.2): flags 0, the reason code, properties = Server Reference (0x1C, a UTF-8 string).
    static func connack(reasonCode: UInt8, reference: String) -> [UInt8] {
        let text = Array(reference.utf8)
        let properties: [UInt8] = [0x1C, UInt8(text.count >> 8), UInt8(text.count & 0xFF)] + text
        let body: [UInt8] = [0x00, reasonCode] + variableLength(properties.count) + properties
        return [0x20] + variableLength(body.count) + body
    }

    static func variableLength(_ value: Int) -> [UInt8] {
        var value = value
        var bytes: [UInt8] = []
        repeat {
            var byte = UInt8(value & 0x7F)
            value >>= 7
            if value > 0 { byte |= 0x80 }
            bytes.append(byte)
        } while value > 0
        return bytes
    }

    private func acceptLoop(_ connack: [UInt8]) {
        while !stopped.load(ordering: .relaxed) {
            let client = accept(listener, nil, nil)
            guard client >= 0 else {
                if errno == EINTR { continue }
                return
            }
            if Self.readPacket(client) {
                _ = connack.withUnsafeBytes { send(client, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                count.add(1, ordering: .relaxed)
                // Let the client read the CONNACK before the close.
                var scratch = [UInt8](repeating: 0, count: 256)
                var timeout = timeval(tv_sec: 2, tv_usec: 0)
                setsockopt(client, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
                _ = scratch.withUnsafeMutableBytes { recv(client, $0.baseAddress, $0.count, 0) }
            }
            close(client)
        }
    }

    /// Reads one whole MQTT packet (the CONNECT); false when the client went away first.
    private static func readPacket(_ fd: Int32) -> Bool {
        func byte() -> UInt8? {
            var value: UInt8 = 0
            return recv(fd, &value, 1, 0) == 1 ? value : nil
        }
        guard byte() != nil else { return false }
        var remaining = 0
        var shift = 0
        while true {
            guard let next = byte() else { return false }
            remaining |= Int(next & 0x7F) << shift
            shift += 7
            if next & 0x80 == 0 { break }
            if shift > 21 { return false }
        }
        var body = [UInt8](repeating: 0, count: remaining)
        var got = 0
        while got < remaining {
            let n = body.withUnsafeMutableBytes { recv(fd, $0.baseAddress! + got, remaining - got, 0) }
            guard n > 0 else { return false }
            got += n
        }
        return true
    }
}
