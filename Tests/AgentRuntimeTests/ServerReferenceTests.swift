import AgentControl
import AgentPipeline
import AgentPorts
import AgentRuntime
import MotionWire
import Testing

/// MQTT 5 Server Reference in the connection supervisor (manual clock): a broker that refuses the connection
/// with 0x9C "use another server" or 0x9D "server moved" and names a server of `mqtt.servers` sends the next
/// attempt there, counted as a failover and named in the log. A server config.yaml does not name is never
/// added (it would receive the device's credentials): the reference is ignored, saying so.
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
        #expect(supervisor.handle(.serverReference(servers: ["c:1883"], written: "c")) == [])
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

    @Test func aServerOutsideTheListIsIgnoredSayingSoAndNeverTried() {
        let clock = ManualClock()
        var supervisor = make(clock, servers: ["a:1883"])
        _ = supervisor.handle(.start)
        let ignored = supervisor.handle(
            .serverReference(servers: ["evil.example:8883"], written: "evil.example:8883\u{1B}[2J")
        )
        let line = logs(ignored).first ?? ""
        #expect(
            line.contains("\"evil.example:8883\\u{1B}[2J\" (MQTT 5 Server Reference), which is not in mqtt.servers")
        )
        #expect(line.contains("ignored: the agent sends its credentials only to the brokers config.yaml names"))
        #expect(!line.contains("\u{1B}"), "the broker's text is printed harmless")
        let refused = supervisor.handle(
            .connectFailed(reason: "the broker refused the connection: server moved", isAuthorization: false)
        )
        #expect(supervisor.servers == ["a:1883"])
        #expect(supervisor.server == 0)
        #expect(supervisor.failovers == 0)
        #expect(logs(refused).allSatisfy { !$0.contains("evil") })
        clock.advance(by: .seconds(9))
        #expect(supervisor.handle(.tick) == [.connect])
        #expect(supervisor.server == 0, "the next attempt goes to config.yaml's server again")
    }

    @Test func theFirstListedServerOfAReferenceListIsChosenWhicheverCaseItIsWrittenIn() {
        let clock = ManualClock()
        var supervisor = make(clock, servers: ["a:1883", "broker-2.example:8883", "c:1883"])
        _ = supervisor.handle(.start)
        let written = "elsewhere:1883 BROKER-2.example:8883 c:1883"
        #expect(
            supervisor.handle(
                .serverReference(
                    servers: Supervisor.referredServers(written, defaultPort: 1883),
                    written: written
                )
            ) == []
        )
        _ = supervisor.handle(.connectFailed(reason: "use another server", isAuthorization: false))
        #expect(supervisor.server == 1)
        #expect(supervisor.failovers == 1)
        #expect(supervisor.servers == ["a:1883", "broker-2.example:8883", "c:1883"])
    }

    @Test func aReferenceThatIsNoAddressIsLoggedAndTheListGoesOn() {
        let clock = ManualClock()
        var supervisor = make(clock, servers: ["a:1883", "b:1883"])
        _ = supervisor.handle(.start)
        let ignored = supervisor.handle(.serverReference(servers: [], written: "mqtt://x:99999"))
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
        #expect(supervisor.handle(.serverReference(servers: ["b:1883"], written: "b:1883")) == [])
        #expect(supervisor.servers == ["a:1883"])
    }
}

extension ServerReferenceTests {
    @Test(
        arguments: [
            ("broker-2:1884", ["broker-2:1884"]),
            ("broker-2", ["broker-2:1883"]),
            ("10.0.0.7:8883 10.0.0.8:8883", ["10.0.0.7:8883", "10.0.0.8:8883"]),
            ("[fd00::7]:1884", ["[fd00::7]:1884"]),
            ("", []),
            ("host:99999", []),
            ("mqtt://broker-2:1883 broker-3", ["broker-3:1883"]),
        ] as [(String, [String])]
    )
    func theAddressesOfAReferenceAreTheServers(written: String, servers: [String]) {
        #expect(Supervisor.referredServers(written, defaultPort: 1883) == servers)
    }
}
