internal import COpenSSL
import Foundation
import Logging
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The console's TLS (`--tls-certificate`, `--tls-key`): OpenSSL terminates each connection on a thread of its own
/// and relays the plaintext over a socket pair to the console's HTTP side, which serves it like any accepted
/// connection (`ConsoleServer`). No plaintext listener exists beside the TLS one. TLS 1.2 at least; the
/// certificate chain and key are read once, at start.
package final class ConsoleTLS: @unchecked Sendable {
    // SSL_CTX is safe to share between threads once configured; each connection has its own SSL.
    private let context: OpaquePointer

    /// Seconds a client has to complete its handshake (a slow or silent one holds no thread longer).
    static let handshakeTimeout = 10
    /// Seconds a write to a client may block before the connection is dropped (a reader that stopped).
    static let writeTimeout = 30

    package struct SetupError: Error, CustomStringConvertible {
        package var description: String
    }

    /// Reads the PEM certificate chain and private key; throws naming the file and what is wrong with it.
    package init(certificateFile: String, keyFile: String) throws {
        guard let context = SSL_CTX_new(TLS_server_method()) else {
            throw SetupError(description: "cannot create a TLS context: \(Self.lastError())")
        }
        self.context = context
        // SSL_CTX_set_min_proto_version is a macro over this call.
        SSL_CTX_ctrl(context, SSL_CTRL_SET_MIN_PROTO_VERSION, Int(TLS1_2_VERSION), nil)
        guard SSL_CTX_use_certificate_chain_file(context, certificateFile) == 1 else {
            throw SetupError(
                description:
                    "--tls-certificate \(certificateFile): not a readable PEM certificate chain (\(Self.lastError())) — give the server certificate, then its intermediates, in PEM"
            )
        }
        guard SSL_CTX_use_PrivateKey_file(context, keyFile, SSL_FILETYPE_PEM) == 1 else {
            throw SetupError(
                description:
                    "--tls-key \(keyFile): not a readable PEM private key (\(Self.lastError())) — give the key of --tls-certificate, unencrypted, readable by this user only"
            )
        }
        guard SSL_CTX_check_private_key(context) == 1 else {
            throw SetupError(
                description:
                    "--tls-key \(keyFile) is not the key of --tls-certificate \(certificateFile) (\(Self.lastError())) — give the pair issued together"
            )
        }
    }

    deinit { SSL_CTX_free(context) }

    /// Accepts on `listener` (a bound, listening, blocking socket) until it is closed; each client's handshake and
    /// relay run on a thread of their own, at most `limit` at once (more are closed at once), and the plaintext end
    /// of each goes to `accepted`.
    func serve(listener: Int32, limit: Int, logger: Logger, accepted: @escaping @Sendable (Int32) -> Void) {
        // A client gone mid-write must end its relay with EPIPE, not end the process.
        signal(SIGPIPE, SIG_IGN)
        let open = Atomic<Int>(0)
        let thread = Thread { [self] in
            while true {
                let client = accept(listener, nil, nil)
                if client < 0 {
                    if errno == EINTR || errno == ECONNABORTED { continue }
                    return
                }
                guard open.add(1, ordering: .relaxed).newValue <= limit else {
                    open.subtract(1, ordering: .relaxed)
                    close(client)
                    continue
                }
                let connection = Thread { [self] in
                    defer { open.subtract(1, ordering: .relaxed) }
                    self.serve(client: client, logger: logger, accepted: accepted)
                }
                connection.stackSize = 256 * 1024
                connection.start()
            }
        }
        thread.start()
    }

    /// One client: the handshake, a socket pair whose other end the console serves, then bytes both ways until
    /// either side ends.
    private func serve(client: Int32, logger: Logger, accepted: @Sendable (Int32) -> Void) {
        defer { close(client) }
        Self.setTimeout(client, SO_RCVTIMEO, seconds: Self.handshakeTimeout)
        Self.setTimeout(client, SO_SNDTIMEO, seconds: Self.writeTimeout)
        guard let ssl = SSL_new(context) else { return }
        defer { SSL_free(ssl) }
        SSL_set_fd(ssl, client)
        guard SSL_accept(ssl) == 1 else {
            logger.debug("console: a TLS handshake failed: \(Self.lastError())")
            return
        }
        // Idle connections (the page's WebSocket) wait in poll, not in a read with a timeout.
        Self.setTimeout(client, SO_RCVTIMEO, seconds: 0)
        var pair: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &pair) == 0 else {
            logger.error("console: cannot make a socket pair for a TLS connection: \(String(cString: strerror(errno)))")
            return
        }
        let inner = pair[0]
        defer { close(inner) }
        accepted(pair[1])
        relay(ssl: ssl, client: client, inner: inner)
        SSL_shutdown(ssl)
    }

    private func relay(ssl: OpaquePointer, client: Int32, inner: Int32) {
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        var fds = [
            pollfd(fd: client, events: Int16(POLLIN), revents: 0), pollfd(fd: inner, events: Int16(POLLIN), revents: 0),
        ]
        while true {
            // Bytes OpenSSL already decrypted are not visible to poll.
            if SSL_pending(ssl) == 0 {
                fds[0].revents = 0
                fds[1].revents = 0
                let ready = poll(&fds, 2, -1)
                if ready < 0 {
                    if errno == EINTR { continue }
                    return
                }
            }
            if SSL_pending(ssl) > 0 || fds[0].revents != 0 {
                let count = buffer.withUnsafeMutableBytes { SSL_read(ssl, $0.baseAddress, Int32($0.count)) }
                if count <= 0 {
                    let error = SSL_get_error(ssl, count)
                    if error == SSL_ERROR_WANT_READ || error == SSL_ERROR_WANT_WRITE { continue }
                    return
                }
                guard Self.writeAll(inner, buffer, Int(count)) else { return }
                fds[0].revents = 0
            }
            if fds[1].revents != 0 {
                let count = buffer.withUnsafeMutableBytes { read(inner, $0.baseAddress, $0.count) }
                if count <= 0 { return }
                var offset = 0
                while offset < count {
                    let written = buffer.withUnsafeBytes {
                        SSL_write(ssl, $0.baseAddress! + offset, Int32(count - offset))
                    }
                    if written <= 0 { return }
                    offset += Int(written)
                }
                fds[1].revents = 0
            }
        }
    }

    private static func writeAll(_ fd: Int32, _ buffer: [UInt8], _ count: Int) -> Bool {
        var offset = 0
        while offset < count {
            let written = buffer.withUnsafeBytes {
                send(fd, $0.baseAddress! + offset, count - offset, Int32(MSG_NOSIGNAL))
            }
            if written < 0, errno == EINTR { continue }
            if written <= 0 { return false }
            offset += written
        }
        return true
    }

    private static func setTimeout(_ fd: Int32, _ option: Int32, seconds: Int) {
        var time = timeval(tv_sec: seconds, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, option, &time, socklen_t(MemoryLayout<timeval>.size))
    }

    /// OpenSSL's last error on this thread, as text (and the queue cleared).
    static func lastError() -> String {
        let code = ERR_get_error()
        guard code != 0 else { return "no detail from OpenSSL" }
        var text = [CChar](repeating: 0, count: 256)
        ERR_error_string_n(code, &text, text.count)
        ERR_clear_error()
        return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
