import Testing

@testable import FleetConsole

/// Who may read and change what: Host checks (DNS rebinding), the token, same-origin changes and WebSockets.
struct ConsoleAccessTests {
    static let token = "t0ken-0123456789abcdef"
    static let loopback = ConsoleAccess(
        token: token,
        loopback: true,
        hosts: ConsoleListenAddress(host: "127.0.0.1", port: 8080).hostHeaders(names: [])
    )
    static let exposed = ConsoleAccess(
        token: token,
        loopback: false,
        hosts: ConsoleListenAddress(host: "0.0.0.0", port: 8080).hostHeaders(names: ["console.example"])
    )
    static let cookie = "other=1; motion_console=\(token)"

    struct Case: Sendable, CustomStringConvertible {
        var name: String
        var access: ConsoleAccess
        var request: ConsoleAccess.Request
        var expected: ConsoleAccess.Decision
        var description: String { name }
    }

    static let cases: [Case] = [
        Case(
            name: "loopback: the page without a token is read-only",
            access: loopback,
            request: .init(method: "GET", path: "/", host: "127.0.0.1:8080"),
            expected: .allow(canChange: false)
        ),
        Case(
            name: "loopback: localhost is the same console",
            access: loopback,
            request: .init(method: "GET", path: "/", host: "localhost:8080", cookie: cookie),
            expected: .allow(canChange: true)
        ),
        Case(
            name: "DNS rebinding: another host name is refused",
            access: loopback,
            request: .init(method: "GET", path: "/api/fleet", host: "evil.example:8080"),
            expected: .refuse(status: 421, reason: "")
        ),
        Case(
            name: "no Host header is refused",
            access: loopback,
            request: .init(method: "GET", path: "/"),
            expected: .refuse(status: 421, reason: "")
        ),
        Case(
            name: "beyond loopback: reading needs the token",
            access: exposed,
            request: .init(method: "GET", path: "/api/fleet", host: "console.example:8080"),
            expected: .refuse(status: 401, reason: "")
        ),
        Case(
            name: "beyond loopback: the cookie reads",
            access: exposed,
            request: .init(method: "GET", path: "/api/fleet", host: "console.example:8080", cookie: cookie),
            expected: .allow(canChange: true)
        ),
        Case(
            name: "beyond loopback: a wrong cookie does not",
            access: exposed,
            request: .init(
                method: "GET",
                path: "/",
                host: "console.example:8080",
                cookie: "motion_console=\(token)x"
            ),
            expected: .refuse(status: 401, reason: "")
        ),
        Case(
            name: "a change without the token is refused, also on loopback",
            access: loopback,
            request: .init(
                method: "POST",
                path: "/api/desired",
                host: "127.0.0.1:8080",
                origin: "http://127.0.0.1:8080",
                contentType: "application/json"
            ),
            expected: .refuse(status: 401, reason: "")
        ),
        Case(
            name: "a same-origin change with the cookie passes",
            access: loopback,
            request: .init(
                method: "POST",
                path: "/api/desired",
                host: "127.0.0.1:8080",
                origin: "http://127.0.0.1:8080",
                secFetchSite: "same-origin",
                cookie: cookie,
                contentType: "application/json"
            ),
            expected: .allow(canChange: true)
        ),
        Case(
            name: "a cross-origin change with the cookie is refused",
            access: loopback,
            request: .init(
                method: "POST",
                path: "/api/desired",
                host: "127.0.0.1:8080",
                origin: "http://evil.example",
                cookie: cookie,
                contentType: "application/json"
            ),
            expected: .refuse(status: 403, reason: "")
        ),
        Case(
            name: "a cross-site fetch (Sec-Fetch-Site) is refused even with a matching Origin",
            access: loopback,
            request: .init(
                method: "POST",
                path: "/api/desired",
                host: "127.0.0.1:8080",
                origin: "http://127.0.0.1:8080",
                secFetchSite: "cross-site",
                cookie: cookie,
                contentType: "application/json"
            ),
            expected: .refuse(status: 403, reason: "")
        ),
        Case(
            name: "a cookie change without Origin is refused (only a script with the bearer token omits it)",
            access: loopback,
            request: .init(
                method: "POST",
                path: "/api/desired",
                host: "127.0.0.1:8080",
                cookie: cookie,
                contentType: "application/json"
            ),
            expected: .refuse(status: 403, reason: "")
        ),
        Case(
            name: "a script's change with the bearer token passes",
            access: exposed,
            request: .init(
                method: "POST",
                path: "/api/desired",
                host: "console.example:8080",
                authorization: "Bearer \(token)",
                contentType: "application/json"
            ),
            expected: .allow(canChange: true)
        ),
        Case(
            name: "a form post (not JSON) is refused",
            access: loopback,
            request: .init(
                method: "POST",
                path: "/api/desired",
                host: "127.0.0.1:8080",
                origin: "http://127.0.0.1:8080",
                cookie: cookie,
                contentType: "application/x-www-form-urlencoded"
            ),
            expected: .refuse(status: 415, reason: "")
        ),
        Case(
            name: "a WebSocket from another origin is refused",
            access: loopback,
            request: .init(
                method: "GET",
                path: "/ws",
                host: "127.0.0.1:8080",
                origin: "http://evil.example",
                upgrade: "websocket"
            ),
            expected: .refuse(status: 403, reason: "")
        ),
        Case(
            name: "a WebSocket without Origin is refused",
            access: loopback,
            request: .init(method: "GET", path: "/ws", host: "127.0.0.1:8080", upgrade: "websocket"),
            expected: .refuse(status: 403, reason: "")
        ),
        Case(
            name: "a same-origin WebSocket on loopback reads",
            access: loopback,
            request: .init(
                method: "GET",
                path: "/ws",
                host: "127.0.0.1:8080",
                origin: "http://127.0.0.1:8080",
                upgrade: "websocket"
            ),
            expected: .allow(canChange: false)
        ),
        Case(
            name: "beyond loopback a WebSocket needs the token",
            access: exposed,
            request: .init(
                method: "GET",
                path: "/ws",
                host: "console.example:8080",
                origin: "http://console.example:8080",
                upgrade: "websocket"
            ),
            expected: .refuse(status: 401, reason: "")
        ),
    ]

    @Test(arguments: cases)
    func decides(_ check: Case) {
        let decision = check.access.decide(check.request)
        switch (decision, check.expected) {
        case (.allow(let got), .allow(let want)):
            #expect(got == want)
        case (.refuse(let got, let reason), .refuse(let want, _)):
            #expect(got == want)
            #expect(!reason.isEmpty)
        default:
            Issue.record("\(check.name): \(decision), expected \(check.expected)")
        }
    }

    /// With TLS the console's own origin is https: a change from the http origin of the same host is another
    /// origin's (refused), and the session cookie is `Secure`.
    @Test func overTLSTheOriginIsHTTPSAndTheCookieSecure() {
        let tls = ConsoleAccess(
            token: Self.token,
            loopback: false,
            hosts: ConsoleListenAddress(host: "0.0.0.0", port: 8443).hostHeaders(names: ["console.example"]),
            tls: true
        )
        func change(from origin: String) -> ConsoleAccess.Decision {
            tls.decide(
                .init(
                    method: "POST",
                    path: "/api/desired",
                    host: "console.example:8443",
                    origin: origin,
                    secFetchSite: "same-origin",
                    cookie: Self.cookie,
                    contentType: "application/json"
                )
            )
        }
        #expect(change(from: "https://console.example:8443") == .allow(canChange: true))
        guard case .refuse(let status, _) = change(from: "http://console.example:8443") else {
            Issue.record("a change from the http origin passed")
            return
        }
        #expect(status == 403)
        #expect(tls.sessionCookie.hasSuffix("; Secure"))
        #expect(!Self.exposed.sessionCookie.contains("Secure"), "plain HTTP: a Secure cookie would never come back")
    }

    @Test func theTokenComparisonIsExact() {
        #expect(Self.loopback.accepts(Self.token))
        #expect(!Self.loopback.accepts(Self.token + "x"))
        #expect(!Self.loopback.accepts(String(Self.token.dropLast())))
        #expect(!Self.loopback.accepts(""))
        #expect(Self.loopback.sessionCookie.contains("HttpOnly"))
        #expect(Self.loopback.sessionCookie.contains("SameSite=Strict"))
    }

    @Test(arguments: [
        ("127.0.0.1:8080", "127.0.0.1", UInt16(8080), true),
        ("0.0.0.0:80", "0.0.0.0", UInt16(80), false),
        ("[::1]:9000", "::1", UInt16(9000), true),
        ("192.168.1.20:8080", "192.168.1.20", UInt16(8080), false),
    ])
    func parsesListenAddresses(_ text: String, _ host: String, _ port: UInt16, _ loopback: Bool) throws {
        let address = try #require(ConsoleListenAddress(parsing: text))
        #expect(address.host == host)
        #expect(address.port == port)
        #expect(address.isLoopback == loopback)
    }

    @Test(arguments: ["localhost:8080", "127.0.0.1", "1.2.3:80", "[::1]", "127.0.0.1:99999", "example.com:80"])
    func refusesOtherListenAddresses(_ text: String) {
        #expect(ConsoleListenAddress(parsing: text) == nil)
    }
}
