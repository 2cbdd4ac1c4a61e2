import AgentPorts
import FleetOperations
import FlyingFox
import FlyingSocks
import Foundation
import Logging
import MotionWire

/// `motion-agent console`'s HTTP side: the page and its script and style, the fleet as JSON, the desired-document
/// edits and the WebSocket that pushes what changes. Every request passes `ConsoleAccess` first.
public struct ConsoleServer: Sendable {
    public let hub: ConsoleHub
    public let access: ConsoleAccess
    public let address: ConsoleListenAddress
    let logger: Logger

    public init(hub: ConsoleHub, access: ConsoleAccess, address: ConsoleListenAddress, logger: Logger) {
        self.hub = hub
        self.access = access
        self.address = address
        self.logger = logger
    }

    /// Serves until cancelled; `listening` is called once the socket is bound.
    public func run(listening: @escaping @Sendable () -> Void) async throws {
        let socketAddress: any SocketAddress =
            address.host.contains(":")
            ? try sockaddr_in6.inet6(ip6: address.host, port: address.port)
            : try sockaddr_in.inet(ip4: address.host, port: address.port)
        // WebSockets stay open for as long as a page is; the timeout bounds reading a request.
        let server = HTTPServer(
            config: HTTPServer.Configuration(address: socketAddress, timeout: 30, logger: .disabled),
            handler: ConsoleHandler(hub: hub, access: access, logger: logger)
        )
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await server.run() }
            group.addTask { await hub.broker.run(hub: hub) }
            group.addTask { await hub.run() }
            group.addTask {
                try await server.waitUntilListening(timeout: 10)
                listening()
            }
            defer { group.cancelAll() }
            while let _ = try await group.next() {}
        }
    }
}

/// Routes one request after `ConsoleAccess` allowed it.
struct ConsoleHandler: HTTPHandler {
    let hub: ConsoleHub
    let access: ConsoleAccess
    let logger: Logger

    /// Largest edit body, bytes (a document is at most 64 KiB; an edit names a few keys).
    static let maximumBody = 16 << 10

    func handleRequest(_ request: HTTPRequest) async throws -> HTTPResponse {
        let decision = access.decide(
            ConsoleAccess.Request(
                method: request.method.rawValue,
                path: request.path,
                host: request.headers[HTTPHeader("Host")],
                origin: request.headers[HTTPHeader("Origin")],
                secFetchSite: request.headers[HTTPHeader("Sec-Fetch-Site")],
                cookie: request.headers[HTTPHeader("Cookie")],
                authorization: request.headers[HTTPHeader("Authorization")],
                contentType: request.headers[HTTPHeader("Content-Type")],
                upgrade: request.headers[HTTPHeader("Upgrade")]
            )
        )
        // The token's link: `/?token=…` sets the session cookie and sends the browser on without the token in
        // its address bar or history.
        if request.method == .GET, request.path == "/", let token = request.query.first(where: { $0.name == "token" }) {
            guard case .refuse(421, _) = decision else {
                guard access.accepts(token.value) else {
                    return Self.text(401, "this is not the console's token: open the address the console printed")
                }
                var headers = Self.securityHeaders
                headers[HTTPHeader("Set-Cookie")] = access.sessionCookie
                headers[HTTPHeader("Location")] = "/"
                return HTTPResponse(statusCode: .seeOther, headers: headers)
            }
        }
        guard case .allow(let canChange) = decision else {
            if case .refuse(let status, let reason) = decision { return Self.text(status, reason) }
            return Self.text(403, "refused")
        }
        switch (request.method, request.path) {
        case (.GET, "/"), (.HEAD, "/"):
            return Self.asset(ConsoleAssets.page, type: "text/html; charset=utf-8")
        case (.GET, "/console.js"):
            return Self.asset(ConsoleAssets.script, type: "text/javascript; charset=utf-8")
        case (.GET, "/console.css"):
            return Self.asset(ConsoleAssets.style, type: "text/css; charset=utf-8")
        case (.GET, "/api/fleet"):
            let rows = hub.state.withLock { state in state.board.deviceIDs.compactMap { state.board.row(of: $0) } }
            return Self.json(200, ConsoleJSON.encode(rows))
        case (.GET, "/api/device"):
            guard let id = request.query.first(where: { $0.name == "id" })?.value,
                let detail = hub.state.withLock({ $0.board.detail(of: id) })
            else { return Self.text(404, "no such device: /api/device?id=DEVICE names one the fleet view lists") }
            return Self.json(200, ConsoleJSON.encode(detail))
        case (.POST, "/api/desired"):
            return try await edit(request)
        case (.GET, "/ws"):
            let socket = ConsoleSocket(hub: hub, canChange: canChange)
            return try await WebSocketHTTPHandler(handler: MessageFrameWSHandler(handler: socket))
                .handleRequest(request)
        default:
            return Self.text(404, "not found: the console serves /, /api/fleet, /api/device?id=…, /api/desired, /ws")
        }
    }

    private func edit(_ request: HTTPRequest) async throws -> HTTPResponse {
        if let length = request.headers[.contentLength].flatMap(Int.init), length > Self.maximumBody {
            return Self.text(413, "an edit is at most \(Self.maximumBody) bytes")
        }
        let body = try await request.bodyData
        guard body.count <= Self.maximumBody else {
            return Self.text(413, "an edit is at most \(Self.maximumBody) bytes")
        }
        // The strict parser first, as for every document from the network (duplicate keys, depth, sizes).
        guard (try? StrictJSON.parse(Array(body), limits: .document)) != nil,
            let edit = try? JSONDecoder().decode(ConsoleHub.EditRequest.self, from: body)
        else {
            return Self.json(
                400,
                "{\"error\":\"an edit is JSON: {\\\"layer\\\": \\\"fleet\\\"|\\\"group\\\"|\\\"device\\\", \\\"name\\\": …, \\\"set\\\": {key: value}, \\\"unset\\\": [key], \\\"clear\\\": true}\"}"
            )
        }
        do {
            let result = try hub.edit(edit)
            return Self.json(200, ConsoleJSON.encode(result))
        } catch {
            return Self.json(409, "{\"error\":\(ConsoleJSON.string(Printable.text(error.description, limit: 2000)))}")
        }
    }

    /// Headers on every response: no framing, no sniffing, no referrer, and a policy under which no script runs
    /// but the console's own file — even text that slipped into the page as markup could not run.
    static let securityHeaders: HTTPHeaders = {
        var headers = HTTPHeaders()
        headers[HTTPHeader("Content-Security-Policy")] =
            "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
        headers[HTTPHeader("X-Content-Type-Options")] = "nosniff"
        headers[HTTPHeader("Referrer-Policy")] = "no-referrer"
        headers[HTTPHeader("X-Frame-Options")] = "DENY"
        headers[HTTPHeader("Cache-Control")] = "no-store"
        return headers
    }()

    static func asset(_ text: String, type: String) -> HTTPResponse {
        var headers = securityHeaders
        headers[.contentType] = type
        return HTTPResponse(statusCode: .ok, headers: headers, body: Data(text.utf8))
    }

    static func json(_ status: Int, _ text: String) -> HTTPResponse {
        var headers = securityHeaders
        headers[.contentType] = "application/json"
        return HTTPResponse(
            statusCode: HTTPStatusCode(status, phrase: phrase(status)),
            headers: headers,
            body: Data(text.utf8)
        )
    }

    static func text(_ status: Int, _ text: String) -> HTTPResponse {
        var headers = securityHeaders
        headers[.contentType] = "text/plain; charset=utf-8"
        return HTTPResponse(
            statusCode: HTTPStatusCode(status, phrase: phrase(status)),
            headers: headers,
            body: Data((text + "\n").utf8)
        )
    }

    static func phrase(_ status: Int) -> String {
        switch status {
        case 200: "OK"
        case 400: "Bad Request"
        case 401: "Unauthorized"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 409: "Conflict"
        case 413: "Payload Too Large"
        case 415: "Unsupported Media Type"
        case 421: "Misdirected Request"
        default: "Error"
        }
    }
}

/// One page's WebSocket: what the hub sends it, and its `{"watch": …}` requests.
struct ConsoleSocket: WSMessageHandler {
    let hub: ConsoleHub
    let canChange: Bool

    func makeMessages(for client: AsyncStream<WSMessage>) async throws -> AsyncStream<WSMessage> {
        let (id, output) = hub.open(canChange: canChange)
        let hub = hub
        Task {
            for await message in client {
                if case .text(let text) = message { hub.request(text, from: id) }
            }
            hub.close(id)
        }
        return output
    }
}
