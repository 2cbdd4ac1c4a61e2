import AgentPorts
import MosquittoTransport
import TestSupport
import Testing

/// The client reads an MQTT 5 Server Reference from a CONNACK that refuses the connection with 0x9C "use
/// another server" or 0x9D "server moved" (bytes from `RedirectingBroker`, parsed by the real libmosquitto) and
/// reports it before the attempt's terminal event.
@Suite(.timeLimit(.minutes(5))) struct ServerReferenceTransportTests {
    @Test(arguments: [UInt8(0x9C), 0x9D])
    func aRefusingConnackNamesTheServerBeforeTheTerminalEvent(reasonCode: UInt8) async throws {
        let redirecting = try RedirectingBroker(reference: "127.0.0.1:1884 127.0.0.1:1885", reasonCode: reasonCode)
        defer { redirecting.stop() }
        let client = MosquittoClient()
        let log = EventLog(client)
        try client.connect(
            BrokerConnectOptions(
                host: "127.0.0.1",
                port: redirecting.port,
                clientID: "redirected",
                protocolVersion: .v5
            )
        )
        let terminal = try await log.waitForTerminal()
        guard case .connectFailed(let code, let reason, let isAuthorization) = terminal else {
            Issue.record("expected .connectFailed, got \(terminal)")
            return
        }
        #expect(code == Int(reasonCode))
        #expect(!isAuthorization)
        #expect(reason.contains("refused by the broker"))
        let events = log.connectionEvents
        #expect(events.count == 2)
        #expect(events.first == .serverReference("127.0.0.1:1884 127.0.0.1:1885"))
        #expect(redirecting.redirected == 1)
    }
}
