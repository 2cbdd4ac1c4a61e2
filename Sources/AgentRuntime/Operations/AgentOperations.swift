import AgentConfig
import AgentPorts
import Logging

/// What an operator gets beside the streams: connection counters, the health report (`metrics`) and Home
/// Assistant discovery (`home_assistant`), called from two services: the metrics service (`reportMetrics`) and
/// the connection supervisor (`connected`, `connectFailed`).
final class AgentOperations: Sendable {
    let connections: ConnectionCounters
    private let metrics: MetricsReporter
    private let homeAssistant: HomeAssistantPublisher

    init(
        configuration: AgentConfiguration,
        topics: TopicScheme,
        broker: BrokerClient,
        state: any StateDirectory,
        host: HostSystem,
        clock: any AgentClock,
        logger: Logger
    ) {
        connections = ConnectionCounters(droppedByClient: { [broker] in broker.inboundDrops })
        metrics = MetricsReporter(
            configuration: configuration,
            topics: topics,
            broker: broker,
            connections: connections,
            host: host,
            clock: clock,
            logger: logger
        )
        homeAssistant = HomeAssistantPublisher(
            configuration: configuration,
            topics: topics,
            broker: broker,
            state: state,
            logger: logger
        )
    }

    /// After the birth on every CONNACK.
    func connected() {
        connections.connected()
        homeAssistant.connected()
    }

    func connectFailed() { connections.connectFailed() }

    /// Reports until cancelled, every `interval()` seconds (read again each time: the desired layers and
    /// reloads change it; 0 pauses the report).
    func reportMetrics(
        bootCount: UInt64,
        interval: @escaping @Sendable () -> Int,
        counters: @Sendable () -> HealthCounters
    ) async {
        await metrics.run(bootCount: bootCount, interval: interval, counters: counters)
    }
}
