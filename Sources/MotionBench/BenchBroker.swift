import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A private mosquitto on a free 127.0.0.1 port for the publishing, latency and load benchmarks, with a
/// generated configuration in a temporary directory. The test fixture (Tests/TestSupport) is a test target,
/// so the bench starts its own.
final class BenchBroker {
    let host = "127.0.0.1"
    let port: Int
    let directory: String
    private let process: BenchProcess

    struct StartError: Error, CustomStringConvertible {
        var description: String
    }

    /// - Parameter tcpNoDelay: the listener's `set_tcp_nodelay` (mosquitto's default: off, Nagle on).
    init(executable: String = "/usr/sbin/mosquitto", tcpNoDelay: Bool = false) throws {
        var template = Array(("/tmp/motion-bench-broker." + String(repeating: "X", count: 6)).utf8CString)
        guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
            throw StartError(
                description: "cannot create a temporary directory under /tmp: \(String(cString: strerror(errno)))"
            )
        }
        directory = String(cString: made)
        port = Self.freePort()
        // Unlimited queues: the subscriber must see every message, or the counts would not prove delivery.
        let configuration = """
            listener \(port) 127.0.0.1
            set_tcp_nodelay \(tcpNoDelay)
            allow_anonymous true
            persistence false
            max_queued_messages 0
            max_inflight_messages 100
            log_dest stderr
            log_type error
            """
        try configuration.write(toFile: directory + "/mosquitto.conf", atomically: true, encoding: .utf8)
        do {
            process = try BenchProcess(
                executable,
                ["-c", directory + "/mosquitto.conf"],
                output: directory + "/mosquitto.log"
            )
        } catch {
            throw StartError(description: "\(error) — install mosquitto (apt-get install mosquitto)")
        }
        let deadline = Date().addingTimeInterval(10)
        while !Self.accepts(port) {
            guard process.isRunning, Date() < deadline else {
                stop()
                throw StartError(description: "mosquitto did not listen on 127.0.0.1:\(port) within 10 s")
            }
            usleep(10_000)
        }
    }

    /// A NUL-terminated C error buffer as a String.
    static func text(_ buffer: [CChar]) -> String {
        String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    var pid: Int32 { process.pid }

    func stop() {
        process.terminate()
        try? FileManager.default.removeItem(atPath: directory)
    }

    deinit { stop() }

    private static func loopback(port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = in_addr_t(UInt32(0x7f00_0001).bigEndian)
        return address
    }

    /// A port the kernel hands out for 127.0.0.1 now (bound to 0, read back, released).
    static func freePort() -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = loopback(port: 0)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bound in
                bind(fd, bound, length) == 0 ? getsockname(fd, bound, &length) : -1
            }
        }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    static func accepts(_ port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = loopback(port: port)
        return withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
    }
}
