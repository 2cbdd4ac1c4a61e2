import AgentControl
import AgentPipeline
import AgentPorts
import AgentRuntime
import MotionWire
import Testing

/// `mqtt.servers` and `mqtt.protocol: auto` in the connection supervisor, with a manual clock: which server
/// and protocol each attempt uses, the failover count and the log lines.
@Suite struct ConnectionFailoverTests {
    typealias Supervisor = ConnectionSupervisor<ManualClock>

    static let servers = ["a:1883", "b:1883", "c:1883"]

    private func make(
        _ clock: ManualClock,
        first: Int = 0,
        fallback: Bool = false,
        jitter: Backoff.Jitter = .full
    ) -> Supervisor {
        Supervisor(
            clock: clock,
            backoff: Backoff(base: 1, cap: 8, seed: 42, jitter: jitter),
            servers: Self.servers,
            firstServer: first,
            protocolVersion: .v5,
            protocolFallback: fallback
        )
    }

    private func logs(_ actions: [Supervisor.Action]) -> [String] {
        actions.compactMap { if case .log(_, let text) = $0 { text } else { nil } }
    }

    /// Waits out whatever wait the actions asked for and ticks.
    private func tick(_ supervisor: inout Supervisor, _ clock: ManualClock) -> [Supervisor.Action] {
        clock.advance(by: .seconds(9))
        return supervisor.handle(.tick)
    }

    @Test func lossesAndRefusalsMoveToTheNextServerInTurnAndCountTheFailovers() {
        let clock = ManualClock()
        var supervisor = make(clock, first: 1)
        _ = supervisor.handle(.start)
        #expect(supervisor.server == 1)
        let connected = supervisor.handle(.connected(sessionPresent: false))
        #expect(logs(connected) == ["connected to the broker b:1883 (session present: false)"])

        let lost = supervisor.handle(.disconnected(reason: "broker stopped", expected: false))
        #expect(supervisor.server == 2)
        #expect(supervisor.failovers == 1)
        #expect(logs(lost).first?.contains("— failing over to c:1883 (failover 1) in ") == true)
        #expect(tick(&supervisor, clock) == [.connect])

        let refused = supervisor.handle(.connectFailed(reason: "connection refused", isAuthorization: false))
        #expect(supervisor.server == 0, "after the last server, the first")
        #expect(supervisor.failovers == 2)
        #expect(logs(refused).count == 1)
        #expect(logs(refused)[0].hasPrefix("connection refused — failing over to a:1883 (failover 2) in "))
        #expect(tick(&supervisor, clock) == [.connect])
        _ = supervisor.handle(.connected(sessionPresent: false))
        #expect(supervisor.failovers == 2, "a CONNACK keeps the count: it counts since the start")
        #expect(supervisor.server == 0)
    }

    @Test func anExpectedDisconnectAndTheShutdownDoNotFailOver() {
        let clock = ManualClock()
        var supervisor = make(clock)
        _ = supervisor.handle(.start)
        _ = supervisor.handle(.connected(sessionPresent: false))
        _ = supervisor.handle(.disconnected(reason: "as requested", expected: true))
        #expect(supervisor.server == 0 && supervisor.failovers == 0)
        #expect(supervisor.handle(.shutdown) == [.disconnect])
        #expect(supervisor.handle(.disconnected(reason: "lost", expected: false)) == [.setPublisherConnected(false)])
        #expect(supervisor.failovers == 0)
    }

    /// A session that ends its connection itself (Sparkplug's edge node when its primary host goes offline):
    /// the supervisor closes it, backs off and connects again — to the next server when asked — and the end of
    /// that connection, reported afterwards, changes neither the wait nor the server. Nothing after the goodbye.
    @Test func aSessionThatLeavesComesBackAfterTheWaitOnTheNextServer() {
        let clock = ManualClock()
        var supervisor = make(clock)
        _ = supervisor.handle(.start)
        _ = supervisor.handle(.connected(sessionPresent: false))
        let left = supervisor.handle(.leave(reason: "the primary host went offline", nextServer: true))
        #expect(left.first == .closeConnection)
        #expect(left.contains { if case .wait = $0 { true } else { false } })
        #expect(
            logs(left).first?.hasPrefix("the primary host went offline — failing over to b:1883 (failover 1)") == true
        )
        #expect(supervisor.server == 1)
        #expect(
            supervisor.handle(.disconnected(reason: "as requested", expected: true)) == [.setPublisherConnected(false)]
        )
        #expect(supervisor.handle(.disconnected(reason: "late", expected: false)) == [.setPublisherConnected(false)])
        #expect(supervisor.server == 1 && supervisor.failovers == 1, "the end of the left connection moves nothing")
        #expect(tick(&supervisor, clock) == [.connect])
        #expect(supervisor.server == 1)

        _ = supervisor.handle(.connected(sessionPresent: false))
        let stayed = supervisor.handle(.leave(reason: "left", nextServer: false))
        #expect(stayed.first == .closeConnection && supervisor.server == 1)
        #expect(supervisor.handle(.leave(reason: "again", nextServer: true)).isEmpty, "already waiting")
        _ = supervisor.handle(.shutdown)
        #expect(supervisor.handle(.leave(reason: "after the goodbye", nextServer: true)).isEmpty)
    }

    @Test func autoFallsBackToMQTT311AtOnceForTheServerThatRefusedMQTT5Only() {
        let clock = ManualClock()
        var supervisor = make(clock, fallback: true)
        _ = supervisor.handle(.start)
        #expect(supervisor.protocolVersion == .v5)
        let refused = supervisor.handle(.protocolRefused(reason: "closed on the MQTT 5 CONNECT"))
        #expect(refused.last == .connect, "no back-off: the server is up, it speaks the older protocol")
        #expect(supervisor.protocolVersion == .v311)
        #expect(supervisor.server == 0 && supervisor.failovers == 0 && supervisor.failures == 0)
        #expect(logs(refused).count == 1)
        #expect(
            logs(refused)[0].hasPrefix("a:1883 refused MQTT 5 (closed on the MQTT 5 CONNECT) — speaking MQTT 3.1.1")
        )
        _ = supervisor.handle(.connected(sessionPresent: false))

        // Confirmed by a CONNACK: after a loss and a tour of the others, a:1883 gets 3.1.1 straight away.
        _ = supervisor.handle(.disconnected(reason: "node stopped", expected: false))
        #expect(supervisor.server == 1)
        #expect(supervisor.protocolVersion == .v5, "b:1883 has not refused MQTT 5")
        _ = tick(&supervisor, clock)
        _ = supervisor.handle(.connectFailed(reason: "refused", isAuthorization: false))
        _ = tick(&supervisor, clock)
        _ = supervisor.handle(.connectFailed(reason: "refused", isAuthorization: false))
        #expect(supervisor.server == 0)
        #expect(supervisor.protocolVersion == .v311)
    }

    @Test func aFallbackWhoseMQTT311AttemptFailsTooTriesMQTT5AgainNextTime() {
        // A broker restarting mid-handshake also closes on the CONNECT; when 3.1.1 fails as well, MQTT 5 is
        // tried again next time rather than given up for good.
        let clock = ManualClock()
        var supervisor = make(clock, fallback: true)
        _ = supervisor.handle(.start)
        _ = supervisor.handle(.protocolRefused(reason: "closed"))
        #expect(supervisor.protocolVersion == .v311)
        let failed = supervisor.handle(.connectFailed(reason: "connection refused", isAuthorization: false))
        #expect(failed.contains(.reportConnectFailed))
        #expect(supervisor.server == 1)
        _ = tick(&supervisor, clock)
        _ = supervisor.handle(.connectFailed(reason: "refused", isAuthorization: false))
        _ = tick(&supervisor, clock)
        _ = supervisor.handle(.connectFailed(reason: "refused", isAuthorization: false))
        #expect(supervisor.server == 0)
        #expect(supervisor.protocolVersion == .v5)
    }

    @Test func withoutAutoARefusalOfMQTT5IsAnOrdinaryFailure() {
        let clock = ManualClock()
        var supervisor = make(clock, fallback: false)
        _ = supervisor.handle(.start)
        let refused = supervisor.handle(.protocolRefused(reason: "unsupported protocol version"))
        #expect(refused.first == .reportConnectFailed)
        #expect(supervisor.protocolVersion == .v5)
        #expect(supervisor.failures == 1)
        #expect(supervisor.server == 1)
    }

    @Test func fullJitterSpreadsWaitsOverTheWholeGrowingWindow() {
        // Equal jitter never waits less than half the window; full jitter uses all of it, which is what
        // spreads a fleet's first retries after a broker restart.
        var full = Backoff(base: 1, cap: 8, seed: 1, jitter: .full)
        var equal = Backoff(base: 1, cap: 8, seed: 1, jitter: .equal)
        var fullFirst: [Double] = []
        for seed in 0..<400 as Range<UInt64> {
            var backoff = Backoff(base: 1, cap: 8, seed: seed, jitter: .full)
            fullFirst.append(backoff.next())
        }
        #expect(fullFirst.allSatisfy { $0 >= 0 && $0 <= 1 })
        #expect(fullFirst.filter { $0 < 0.5 }.count > 150, "about half of a fleet retries in the first half")
        for ceiling in [1.0, 2, 4, 8, 8, 8] {
            let f = full.next()
            let e = equal.next()
            #expect(f >= 0 && f <= ceiling)
            #expect(e >= ceiling / 2 && e <= ceiling)
        }
    }

    @Test func aSingleServerKeepsTheOneServerMessages() throws {
        let clock = ManualClock()
        var supervisor = Supervisor(clock: clock, backoff: Backoff(base: 1, cap: 8, seed: 42))
        _ = supervisor.handle(.start)
        let lost = supervisor.handle(.disconnected(reason: "keepalive timeout", expected: false))
        #expect(
            logs(lost).first?.hasPrefix("connection to the broker lost: keepalive timeout — reconnecting in ") == true
        )
        #expect(supervisor.failovers == 0)
    }
}
