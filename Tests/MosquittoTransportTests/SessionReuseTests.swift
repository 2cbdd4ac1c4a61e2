import AgentPorts
import Testing

@testable import MosquittoTransport

/// A reconnect keeps the libmosquitto handle — and with it the QoS > 0 messages awaiting acknowledgement, which it
/// resends on the new connection — whenever only what changes per connection changed: the server, the protocol
/// version, and the will the agent makes afresh for each connection. A new handle would drop them (the bridged
/// failover test lost one durable message this way).
@Suite struct SessionReuseTests {
    func options(host: String = "127.0.0.1", will: String = "offline 1") -> BrokerConnectOptions {
        BrokerConnectOptions(
            host: host,
            port: 1883,
            clientID: "imu-1",
            will: BrokerWill(topic: "motion/imu-1/status", payload: Array(will.utf8), qos: 1, retain: true)
        )
    }

    @Test func aNewWillOrServerKeepsTheSession() {
        #expect(MosquittoClient.sameSession(options(), options(will: "offline 2")))
        #expect(MosquittoClient.sameSession(options(), options(host: "10.0.0.2")))
    }

    @Test func anotherAccountIsAnotherSession() {
        var other = options()
        other.clientID = "imu-2"
        #expect(!MosquittoClient.sameSession(options(), other))
    }
}
