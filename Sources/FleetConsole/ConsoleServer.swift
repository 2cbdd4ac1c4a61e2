import AgentPorts
import FleetOperations
import FlyingSocks
import Foundation
import Logging
import MotionWire
import Synchronization

/// `motion-agent console`'s HTTP side: the page and its script and style, the fleet as JSON, the desired-document
/// edits and the WebSocket that pushes what changes. Every request passes `ConsoleAccess` first.
///
/// HTTP and WebSocket are the console's own (`ConsoleHTTPRequest`, `WebSocketCodec`: small, bounded, fuzzed) on
/// FlyingSocks' non-blocking sockets. FlyingFox's HTTP server was the first choice, but it imports
/// FoundationNetworking (its proxy handler), which made the statically linked release agent need libcurl.
package struct ConsoleServer: Sendable {
    package let hub: ConsoleHub
    package let access: ConsoleAccess
    package let address: ConsoleListenAddress
    let logger: Logger

    /// Connections served at once; more wait in the listen backlog.
    static let maximumConnections = 256
    /// Seconds a request may take to arrive whole (a slow sender holds no connection longer).
    static let requestTimeout = 10.0

    package init(hub: ConsoleHub, access: ConsoleAccess, address: ConsoleListenAddress, logger: Logger) {
        self.hub = hub
        self.access = access
        self.address = address
        self.logger = logger
    }

    /// Serves until cancelled; `listening` is called once the socket is bound. With `tls`, every connection is
    /// TLS (`ConsoleTLS` terminates it and hands the plaintext over a socket pair).
    package func run(tls: ConsoleTLS? = nil, listening: @escaping @Sendable () -> Void) async throws {
        let socket: Socket
        if address.host.contains(":") {
            socket = try Socket(domain: AF_INET6, type: .stream)
            try socket.setValue(true, for: .localAddressReuse)
            try socket.bind(to: try sockaddr_in6.inet6(ip6: address.host, port: address.port))
        } else {
            socket = try Socket(domain: AF_INET, type: .stream)
            try socket.setValue(true, for: .localAddressReuse)
            try socket.bind(to: try sockaddr_in.inet(ip4: address.host, port: address.port))
        }
        try socket.listen()
        let pool: some AsyncSocketPool = .make()
        try await pool.prepare()
        let handler = ConsoleHandler(hub: hub, access: access, logger: logger)
        let open = ConnectionCount()
        // With TLS the accepted sockets are the plaintext ends `ConsoleTLS` hands over; else the listener's.
        var tlsClients: AsyncStream<AsyncSocket>?
        var listener: AsyncSocket?
        if let tls {
            let (stream, continuation) = AsyncStream<AsyncSocket>.makeStream()
            tlsClients = stream
            tls.serve(listener: socket.file.rawValue, limit: Self.maximumConnections, logger: logger) { plaintext in
                do {
                    continuation.yield(try AsyncSocket(socket: Socket(file: .init(rawValue: plaintext)), pool: pool))
                } catch {
                    close(plaintext)
                }
            }
        } else {
            listener = try AsyncSocket(socket: socket, pool: pool)
        }
        /// Serves each accepted connection, at most `maximumConnections` at once.
        @Sendable func serve<Clients: AsyncSequence>(_ clients: Clients) async throws
        where Clients.Element == AsyncSocket {
            try await withThrowingDiscardingTaskGroup { connections in
                for try await client in clients {
                    guard open.value.add(1, ordering: .relaxed).newValue <= Self.maximumConnections else {
                        open.value.subtract(1, ordering: .relaxed)
                        try? client.close()
                        continue
                    }
                    connections.addTask {
                        await ConsoleConnection(socket: client, handler: handler).serve()
                        try? client.close()
                        open.value.subtract(1, ordering: .relaxed)
                    }
                }
            }
        }
        listening()
        try await withThrowingTaskGroup(of: Void.self) { [tlsClients, listener] group in
            group.addTask { try await pool.run() }
            group.addTask { await hub.broker.run(hub: hub) }
            group.addTask { await hub.run() }
            group.addTask {
                if let tlsClients {
                    try await serve(tlsClients)
                } else if let listener {
                    try await serve(listener.sockets)
                }
            }
            defer { group.cancelAll() }
            while try await group.next() != nil {}
        }
    }
}

/// The connections being served.
final class ConnectionCount: Sendable {
    let value = Atomic<Int>(0)
}

/// One accepted connection: one request and its answer, or a WebSocket for as long as the page keeps it.
struct ConsoleConnection: Sendable {
    let socket: AsyncSocket
    let handler: ConsoleHandler

    func serve() async {
        let request: ConsoleHTTPRequest
        do {
            guard let read = try await readRequest() else { return }
            switch read {
            case .success(let parsed): request = parsed
            case .failure(let refusal):
                try await write(ConsoleHandler.text(refusal.status, refusal.reason))
                return
            }
        } catch {
            return
        }
        let answer = handler.handle(request)
        do {
            switch answer {
            case .response(let response):
                try await write(response)
            case .webSocket(let canChange):
                try await webSocket(request, canChange: canChange)
            }
        } catch {
            return
        }
    }

    struct Refusal: Error {
        var status: Int
        var reason: String
    }

    /// The request, or nil when the peer went away first; bounded in bytes and in time.
    private func readRequest() async throws -> Result<ConsoleHTTPRequest, Refusal>? {
        let deadline = ContinuousClock.now + .seconds(ConsoleServer.requestTimeout)
        var bytes: [UInt8] = []
        while true {
            switch ConsoleHTTPRequest.parse(bytes) {
            case .request(let request, _): return .success(request)
            case .invalid(let status, let reason): return .failure(Refusal(status: status, reason: reason))
            case .incomplete: break
            }
            guard ContinuousClock.now < deadline else {
                return .failure(Refusal(status: 408, reason: "the request did not arrive within 10 s"))
            }
            let chunk = try await withTimeout(deadline) { try await socket.read(atMost: 4096) }
            guard let chunk, !chunk.isEmpty else {
                return chunk == nil
                    ? .failure(Refusal(status: 408, reason: "the request did not arrive within 10 s")) : nil
            }
            bytes += chunk
        }
    }

    /// `body`'s result, or nil once `deadline` passed.
    private func withTimeout<T: Sendable>(
        _ deadline: ContinuousClock.Instant,
        _ body: @escaping @Sendable () async throws -> T
    ) async throws -> T? {
        try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask { try await body() }
            group.addTask {
                try? await Task.sleep(until: deadline)
                return nil
            }
            defer { group.cancelAll() }
            let first = try await group.next() ?? nil
            if first == nil { try? socket.close() }  // wakes the read
            return first
        }
    }

    private func write(_ response: ConsoleHTTPResponse) async throws {
        try await socket.write(Data(response.bytes))
    }

    /// The handshake's answer, then the hub's messages out and the page's requests in, until either side closes.
    private func webSocket(_ request: ConsoleHTTPRequest, canChange: Bool) async throws {
        guard request.header("connection")?.lowercased().contains("upgrade") == true,
            request.header("sec-websocket-version") == "13",
            let key = request.header("sec-websocket-key"), let accept = WebSocketCodec.accept(key: key)
        else {
            try await write(ConsoleHandler.text(400, "not a WebSocket handshake (RFC 6455, version 13)"))
            return
        }
        let head =
            "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: \(accept)\r\n\r\n"
        try await socket.write(Data(head.utf8))
        let hub = handler.hub
        let (id, output) = hub.open(canChange: canChange)
        let socket = socket
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                for await text in output {
                    guard (try? await socket.write(Data(WebSocketCodec.encode(.text, Array(text.utf8))))) != nil else {
                        break
                    }
                }
                try? socket.close()
            }
            group.addTask {
                var reader = WebSocketCodec.Reader()
                reading: while true {
                    guard let chunk = try? await socket.read(atMost: 4096), !chunk.isEmpty else { break }
                    reader.append(chunk)
                    while true {
                        switch reader.next() {
                        case .none: continue reading
                        case .message(.text, let payload):
                            hub.request(String(decoding: payload, as: UTF8.self), from: id)
                        case .message(.ping, let payload):
                            _ = try? await socket.write(Data(WebSocketCodec.encode(.pong, payload)))
                        case .message(.close, _):
                            _ = try? await socket.write(Data(WebSocketCodec.encode(.close, [0x03, 0xE8])))
                            break reading
                        case .message: continue
                        case .invalid(let code, _):
                            _ = try? await socket.write(
                                Data(WebSocketCodec.encode(.close, [UInt8(code >> 8), UInt8(code & 0xFF)]))
                            )
                            break reading
                        }
                    }
                }
                hub.close(id)  // ends `output`, and with it the writer
            }
            await group.waitForAll()
        }
    }
}

/// An answer: bytes to write and close, or a WebSocket to open.
enum ConsoleAnswer: Sendable {
    case response(ConsoleHTTPResponse)
    case webSocket(canChange: Bool)
}

/// Routes one request after `ConsoleAccess` allowed it.
struct ConsoleHandler: Sendable {
    let hub: ConsoleHub
    let access: ConsoleAccess
    let logger: Logger

    func handle(_ request: ConsoleHTTPRequest) -> ConsoleAnswer {
        let decision = access.decide(
            ConsoleAccess.Request(
                method: request.method,
                path: request.path,
                host: request.header("host"),
                origin: request.header("origin"),
                secFetchSite: request.header("sec-fetch-site"),
                cookie: request.header("cookie"),
                authorization: request.header("authorization"),
                contentType: request.header("content-type"),
                upgrade: request.header("upgrade")
            )
        )
        // The token's link: `/?token=…` sets the session cookie and sends the browser on without the token in
        // its address bar or history.
        if request.method == "GET", request.path == "/", let token = request.queryValue("token") {
            if case .refuse(421, let reason) = decision { return .response(Self.text(421, reason)) }
            guard access.accepts(token) else {
                return .response(
                    Self.text(401, "this is not the console's token: open the address the console printed")
                )
            }
            var response = ConsoleHTTPResponse(status: 303)
            response.headers.append(("Set-Cookie", access.sessionCookie))
            response.headers.append(("Location", "/"))
            return .response(response)
        }
        guard case .allow(let canChange) = decision else {
            if case .refuse(let status, let reason) = decision { return .response(Self.text(status, reason)) }
            return .response(Self.text(403, "refused"))
        }
        switch (request.method, request.path) {
        case ("GET", "/"), ("HEAD", "/"):
            return .response(
                Self.asset(ConsoleAssets.page, type: "text/html; charset=utf-8", head: request.method == "HEAD")
            )
        case ("GET", "/console.js"):
            return .response(Self.asset(ConsoleAssets.script, type: "text/javascript; charset=utf-8"))
        case ("GET", "/console.css"):
            return .response(Self.asset(ConsoleAssets.style, type: "text/css; charset=utf-8"))
        case ("GET", "/api/fleet"):
            let rows = hub.state.withLock { state in state.board.deviceIDs.compactMap { state.board.row(of: $0) } }
            return .response(Self.json(200, ConsoleJSON.encode(rows)))
        case ("GET", "/api/device"):
            guard let id = request.queryValue("id"), let detail = hub.state.withLock({ $0.board.detail(of: id) }) else {
                return .response(Self.text(404, "no such device: /api/device?id=DEVICE names one the fleet view lists"))
            }
            return .response(Self.json(200, ConsoleJSON.encode(detail)))
        case ("POST", "/api/desired"):
            return .response(edit(request))
        case ("GET", "/ws"):
            guard request.header("upgrade")?.lowercased() == "websocket" else {
                return .response(Self.text(426, "/ws is a WebSocket"))
            }
            return .webSocket(canChange: canChange)
        default:
            return .response(
                Self.text(404, "not found: the console serves /, /api/fleet, /api/device?id=…, /api/desired, /ws")
            )
        }
    }

    private func edit(_ request: ConsoleHTTPRequest) -> ConsoleHTTPResponse {
        // The strict parser first, as for every document from the network (duplicate keys, depth, sizes).
        guard (try? StrictJSON.parse(request.body, limits: .document)) != nil,
            let edit = try? JSONDecoder().decode(ConsoleHub.EditRequest.self, from: Data(request.body))
        else {
            return Self.json(
                400,
                #"{"error":"an edit is JSON: {\"layer\": \"fleet\"|\"group\"|\"device\", \"name\": …, \"set\": {key: value}, \"unset\": [key], \"clear\": true}"}"#
            )
        }
        do {
            let result = try hub.edit(edit)
            return Self.json(200, ConsoleJSON.encode(result))
        } catch {
            return Self.json(409, "{\"error\":\(ConsoleJSON.string(Printable.text(error.description, limit: 2000)))}")
        }
    }

    static func asset(_ text: String, type: String, head: Bool = false) -> ConsoleHTTPResponse {
        var response = ConsoleHTTPResponse(status: 200, type: type, body: Array(text.utf8))
        if head { response.omitBody = true }
        return response
    }

    static func json(_ status: Int, _ text: String) -> ConsoleHTTPResponse {
        ConsoleHTTPResponse(status: status, type: "application/json", body: Array(text.utf8))
    }

    static func text(_ status: Int, _ text: String) -> ConsoleHTTPResponse {
        ConsoleHTTPResponse(status: status, type: "text/plain; charset=utf-8", body: Array((text + "\n").utf8))
    }
}
