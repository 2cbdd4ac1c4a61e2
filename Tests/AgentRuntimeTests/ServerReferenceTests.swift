import AgentControl
import AgentPipeline
import AgentPorts
import AgentRuntime
import MotionWire
import Testing

/// MQTT 5 Server Reference in the connection supervisor (manual clock): a broker that refuses the connection
/// with 0x9C "use another server" or 0x9D "server moved" and names a server sends the next attempt there —
/// counted as a failover, named in the log and in `servers` — whether or not it is one of `mqtt.servers`.
@Suite struct ServerReferenceTests {
    typealias Supervisor = ConnectionSupervisor<ManualClock>

    private func make(_ clock: ManualClock, servers: [String]) -> Supervisor {
        Supervisor(
            clock: clock,
            backoff: Backoff(base: 1, cap: 8, seed: 42, jitter: .full),
            servers: servers,
            protocolVersion: .v5
        )
    }

    private func logs(_ actions: [Supervisor.Action]) -> [String] {
        actions.compactMap { if case .log(_, let text) = $0 { text } else { nil } }
    }

    @Test func aReferencedServerOfTheListIsTriedNextInsteadOfTheListsNext() {
        let clock = ManualClock()
        var supervisor = make(clock, servers: ["a:1883", "b:1883", "c:1883"])
        _ = supervisor.handle(.start)
        #expect(supervisor.handle(.serverReference(server: "c:1883", written: "c")) == [])
        let refused = supervisor.handle(
            .connectFailed(reason: "the broker refused the connection: use another server", isAuthorization: false)
        )
        #expect(supervisor.server == 2, "c, not the list's next (b)")
        #expect(supervisor.failovers == 1)
        #expect(
            logs(refused).first?.contains(
                "failing over to c:1883, the server the broker named (MQTT 5 Server Reference; failover 1) in "
            ) == true
        )
        // The reference is used once: the next failure goes on from there in list order.
        clock.advance(by: .seconds(9))
        _ = supervisor.handle(.tick)
        _ = supervisor.handle(.connectFailed(reason: "connection refused", isAuthorization: false))
        #expect(supervisor.server == 0)
        #expect(supervisor.failovers == 2)
    }

    @Test func aServerOutsideTheListIsAddedAndTriedNextEvenWithOneServer() {
        let clock = ManualClock()
        var supervisor = make(clock, servers: ["a:1883"])
        _ = supervisor.handle(.start)
        _ = supervisor.handle(.serverReference(server: "broker-2.example:8883", written: "broker-2.example:8883"))
        let refused = supervisor.handle(
            .connectFailed(reason: "the broker refused the connection: server moved", isAuthorization: false)
        )
        #expect(supervisor.servers == ["a:1883", "broker-2.example:8883"])
        #expect(supervisor.server == 1)
        #expect(supervisor.failovers == 1)
        #expect(supervisor.protocolVersion == .v5)
        #expect(logs(refused).first?.contains("failing over to broker-2.example:8883") == true)
        clock.advance(by: .seconds(9))
        #expect(supervisor.handle(.tick) == [.connect])
        let connected = supervisor.handle(.connected(sessionPresent: false))
        #expect(logs(connected).first == "connected to the broker broker-2.example:8883 (session present: false)")
        // Lost later: the list goes on, the referred server being one of it now.
        _ = supervisor.handle(.disconnected(reason: "broker stopped", expected: false))
        #expect(supervisor.server == 0)
        #expect(supervisor.failovers == 2)
    }

    @Test func aReferenceThatIsNoAddressIsLoggedAndTheListGoesOn() {
        let clock = ManualClock()
        var supervisor = make(clock, servers: ["a:1883", "b:1883"])
        _ = supervisor.handle(.start)
        let ignored = supervisor.handle(.serverReference(server: nil, written: "mqtt://x:99999"))
        #expect(
            logs(ignored).first?.contains("\"mqtt://x:99999\" (MQTT 5 Server Reference), which is not a host") == true
        )
        _ = supervisor.handle(.connectFailed(reason: "use another server", isAuthorization: false))
        #expect(supervisor.server == 1)
        #expect(supervisor.servers == ["a:1883", "b:1883"])
    }

    @Test func afterTheGoodbyeAReferenceChangesNothing() {
        let clock = ManualClock()
        var supervisor = make(clock, servers: ["a:1883"])
        _ = supervisor.handle(.start)
        _ = supervisor.handle(.shutdown)
        #expect(supervisor.handle(.serverReference(server: "b:1883", written: "b:1883")) == [])
        #expect(supervisor.servers == ["a:1883"])
    }
}

extension ServerReferenceTests {
    @Test(
        arguments: [
            ("broker-2:1884", "broker-2:1884"),
            ("broker-2", "broker-2:1883"),
            ("10.0.0.7:8883 10.0.0.8:8883", "10.0.0.7:8883"),
            ("[fd00::7]:1884", "[fd00::7]:1884"),
            ("", nil),
            ("host:99999", nil),
            ("mqtt://broker-2:1883", nil),
        ] as [(String, String?)]
    )
    func theFirstAddressOfAReferenceIsTheServer(written: String, server: String?) {
        #expect(Supervisor.referredServer(written, defaultPort: 1883) == server)
    }
}
