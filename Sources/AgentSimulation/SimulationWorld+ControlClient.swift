import MemoryBroker

extension SimulationWorld {
    /// Starts a process of `device` whose broker client reads at most `readsPerPump` PUBLISH packets per network
    /// turn and holds at most `eventBacklogLimit` events unread — an agent that falls behind a flood, as one on a
    /// busy or slow device does: what it cannot read waits at the broker, which drops QoS 0 messages beyond its
    /// `maxQueuedMessages` (mosquitto's `max_queued_messages`), and what it read but did not take is dropped by
    /// the client and counted (`connection.inboundDropped`).
    package func start(_ device: SimulatedAgent, readsPerPump: Int, eventBacklogLimit: Int = 16_384) {
        guard let first = brokers.first else {
            preconditionFailure("add a broker before starting a device")
        }
        let client = first.makeClient(eventBacklogLimit: eventBacklogLimit, readsPerPump: readsPerPump)
        executor.run { device.start(clock: clock, executor: executor, client: client) }
    }
}
