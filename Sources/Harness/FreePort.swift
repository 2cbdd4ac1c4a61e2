import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A TCP port on 127.0.0.1 that nothing listens on right now.
package enum FreePort {
    /// A port below the kernel's ephemeral range (net.ipv4.ip_local_port_range) that can be bound now.
    ///
    /// Ports from the ephemeral range (what binding port 0 returns) are also handed to every outgoing
    /// connection, so with many clients in parallel tests one of them can take the port between this call and
    /// the broker's bind. Below that range only explicit binds compete; a random pick among ~20 000 ports,
    /// checked by binding it, makes a clash between two tests unlikely, and `MosquittoBroker` retries on one.
    package static func find() -> Int {
        let low = ephemeralRangeStart()
        let candidates = 10_000..<max(10_001, low)
        for _ in 0..<200 {
            let port = Int.random(in: candidates)
            if canBind(port) { return port }
        }
        return kernelChosen()
    }

    /// Binds port 0 on 127.0.0.1 and reads back the port the kernel chose (from the ephemeral range).
    package static func kernelChosen() -> Int {
        let fd = makeSocket()
        precondition(fd >= 0, "socket() failed: \(String(cString: strerror(errno)))")
        defer { close(fd) }
        var address = loopback(port: 0)
        let bound = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        precondition(bound == 0, "bind(127.0.0.1:0) failed: \(String(cString: strerror(errno)))")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let named = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        precondition(named == 0, "getsockname failed: \(String(cString: strerror(errno)))")
        return Int(UInt16(bigEndian: address.sin_port))
    }

    private static func canBind(_ port: Int) -> Bool {
        let fd = makeSocket()
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = loopback(port: port)
        return withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
    }

    /// The first port of net.ipv4.ip_local_port_range (Linux default 32768).
    private static func ephemeralRangeStart() -> Int {
        guard let text = try? String(contentsOfFile: "/proc/sys/net/ipv4/ip_local_port_range", encoding: .utf8),
            let first = text.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\n" }).first,
            let port = Int(first)
        else { return 32768 }
        return port
    }

    private static func makeSocket() -> Int32 {
        #if canImport(Glibc)
        socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        socket(AF_INET, SOCK_STREAM, 0)
        #endif
    }

    private static func loopback(port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return address
    }

    /// Whether something accepts TCP connections on 127.0.0.1:`port` right now.
    package static func isAccepting(_ port: Int) -> Bool {
        #if canImport(Glibc)
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        let fd = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let result = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        return result == 0
    }
}
