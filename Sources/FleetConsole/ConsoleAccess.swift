/// Who may do what on the console, decided per request from its method, path and headers — pure, so every rule
/// is tested without a socket (FleetConsoleTests).
///
/// - Every request must name, in `Host`, an address the console answers as (its listen address, or loopback
///   names on loopback): a page on another site whose name was re-pointed at the console's address (DNS
///   rebinding) is refused.
/// - On loopback, reading (the page, the fleet, a device) needs no token; beyond loopback everything does.
/// - A change (any method but GET and HEAD) always needs the token — from the session cookie the token's link
///   sets, or `Authorization: Bearer` — and is refused cross-origin: a browser's `Origin` (and `Sec-Fetch-Site`,
///   when sent) must be this console's, and the body must be JSON, which a cross-site form cannot send without a
///   CORS preflight the console never grants. The cookie is also `SameSite=Strict`.
/// - A WebSocket (the live push, read-only) is refused from another origin (cross-site WebSocket hijacking).
package struct ConsoleAccess: Sendable {
    /// The secret a browser presents (cookie) or a script (bearer). Compared in constant time.
    package let token: String
    /// Whether the console listens on loopback only: then reading needs no token.
    package let loopback: Bool
    /// The `Host` header values the console answers to, lowercased (`127.0.0.1:8080`, `localhost:8080`, …).
    package let hosts: Set<String>

    /// Whether the console serves HTTPS (`ConsoleTLS`): the scheme its own origin has, and a `Secure` cookie.
    package let tls: Bool

    /// The cookie the token's link sets.
    package static let cookieName = "motion_console"

    package init(token: String, loopback: Bool, hosts: Set<String>, tls: Bool = false) {
        self.token = token
        self.loopback = loopback
        self.hosts = Set(hosts.map { $0.lowercased() })
        self.tls = tls
    }

    /// `http` or `https`: the scheme of this console's own origin.
    var scheme: String { tls ? "https" : "http" }

    /// The parts of a request the decision reads. Header names are case-insensitive; pass the values as sent.
    package struct Request: Sendable {
        package var method: String
        package var path: String
        package var host: String?
        package var origin: String?
        package var secFetchSite: String?
        package var cookie: String?
        package var authorization: String?
        package var contentType: String?
        /// `Upgrade: websocket`.
        package var upgrade: String?

        package init(
            method: String,
            path: String,
            host: String? = nil,
            origin: String? = nil,
            secFetchSite: String? = nil,
            cookie: String? = nil,
            authorization: String? = nil,
            contentType: String? = nil,
            upgrade: String? = nil
        ) {
            self.method = method
            self.path = path
            self.host = host
            self.origin = origin
            self.secFetchSite = secFetchSite
            self.cookie = cookie
            self.authorization = authorization
            self.contentType = contentType
            self.upgrade = upgrade
        }
    }

    package enum Decision: Sendable, Equatable {
        /// Serve it; `canChange`: the request carries the token (the page offers edits).
        case allow(canChange: Bool)
        /// Refuse with this HTTP status and a reason for the body (no device text in it).
        case refuse(status: Int, reason: String)
    }

    package func decide(_ request: Request) -> Decision {
        guard let host = request.host?.lowercased(), hosts.contains(host) else {
            return .refuse(
                status: 421,
                reason:
                    "this console answers only as \(hosts.sorted().joined(separator: ", ")): open it by that address (start it with --listen to change it)"
            )
        }
        let authenticated = presentsToken(request)
        let method = request.method.uppercased()
        let reading = method == "GET" || method == "HEAD"
        let sameOrigin = isSameOrigin(request, host: host)
        if request.upgrade?.lowercased() == "websocket" {
            // Browsers always send Origin with a WebSocket handshake; a page elsewhere must not read the fleet.
            guard let origin = request.origin, origin.lowercased() == "\(scheme)://\(host)" else {
                return .refuse(status: 403, reason: "a WebSocket from another origin is refused")
            }
            guard loopback || authenticated else {
                return .refuse(status: 401, reason: Self.tokenNeeded)
            }
            return .allow(canChange: authenticated)
        }
        if reading {
            guard loopback || authenticated else { return .refuse(status: 401, reason: Self.tokenNeeded) }
            return .allow(canChange: authenticated)
        }
        guard authenticated else {
            return .refuse(
                status: 401,
                reason: "changes need the console's token: open the address the console printed (it carries the token)"
            )
        }
        guard sameOrigin else { return .refuse(status: 403, reason: "a change from another origin is refused") }
        guard let type = request.contentType?.lowercased(), type.hasPrefix("application/json") else {
            return .refuse(status: 415, reason: "a change is a JSON body (Content-Type: application/json)")
        }
        return .allow(canChange: true)
    }

    /// Whether `candidate` is the token (the `?token=` of the printed address).
    package func accepts(_ candidate: String) -> Bool { Self.constantTimeEqual(candidate, token) }

    /// The `Set-Cookie` value a correct `?token=` earns: the browser's session for the console.
    package var sessionCookie: String {
        "\(Self.cookieName)=\(token); Path=/; HttpOnly; SameSite=Strict\(tls ? "; Secure" : "")"
    }

    static let tokenNeeded =
        "this console listens beyond loopback: open the address it printed, which carries its token (or send Authorization: Bearer TOKEN)"

    private func presentsToken(_ request: Request) -> Bool {
        if let authorization = request.authorization, authorization.hasPrefix("Bearer "),
            Self.constantTimeEqual(String(authorization.dropFirst(7)), token)
        {
            return true
        }
        guard let cookie = request.cookie else { return false }
        for part in cookie.split(separator: ";") {
            let pair = part.trimmingCharacters(in: " ")
            guard pair.hasPrefix(Self.cookieName + "=") else { continue }
            if Self.constantTimeEqual(String(pair.dropFirst(Self.cookieName.count + 1)), token) { return true }
        }
        return false
    }

    /// A browser's request from this console's own page: its `Origin`, when sent, names this host, and its
    /// `Sec-Fetch-Site`, when sent, is same-origin. Browsers send Origin with every POST, so a change without one
    /// is a script's, accepted only with the token in `Authorization` (which no cross-site page can set).
    private func isSameOrigin(_ request: Request, host: String) -> Bool {
        if let site = request.secFetchSite?.lowercased(), site != "same-origin" { return false }
        if let origin = request.origin, origin.lowercased() != "\(scheme)://\(host)" { return false }
        if request.origin == nil, request.authorization == nil { return false }
        return true
    }

    static func constantTimeEqual(_ a: String, _ b: String) -> Bool {
        let x = Array(a.utf8)
        let y = Array(b.utf8)
        var difference = UInt8(x.count == y.count ? 0 : 1)
        for index in 0..<max(x.count, y.count) {
            difference |= (index < x.count ? x[index] : 0) ^ (index < y.count ? y[index] : 0)
        }
        return difference == 0
    }
}

extension String {
    fileprivate func trimmingCharacters(in set: Character) -> String {
        var text = Substring(self)
        while text.first == set { text = text.dropFirst() }
        while text.last == set { text = text.dropLast() }
        return String(text)
    }
}

extension Substring {
    fileprivate func trimmingCharacters(in set: Character) -> String { String(self).trimmingCharacters(in: set) }
}
