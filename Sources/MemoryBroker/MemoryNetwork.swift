import AgentPorts
import Synchronization

/// The wires between in-memory brokers and their clients, and the clock they run on. A broker made with
/// `MemoryBroker(name:options:now:)` has a network of its own; brokers made on one network
/// (`MemoryBroker(name:options:network:)`) share it, so a client can fail over between them (it dials
/// `host:port` = a broker's name and port). Nothing moves between `pump()` calls: the network starts no thread,
/// task or timer.
package final class MemoryNetwork: Sendable {
    /// Seconds on the caller's clock (a simulation's virtual clock, or a test's).
    package let now: @Sendable () -> Double
    let world = Mutex(MemoryWorld())

    package init(now: @escaping @Sendable () -> Double) {
        self.now = now
    }

    /// One network turn (see `MemoryBroker.pump()`); returns whether anything moved.
    @discardableResult
    package func pump() -> Bool {
        let now = self.now()
        var effects = PumpEffects()
        let moved = world.withLock { $0.pump(now: now, effects: &effects) }
        deliver(effects)
        return moved
    }

    /// Pumps until a turn moves nothing (at most `maxPumps` turns); returns the turns that moved something. With
    /// latency, packets not yet due stay where they are: advance the clock and pump again.
    @discardableResult
    package func settle(maxPumps: Int = 100_000) -> Int {
        var turns = 0
        while turns < maxPumps, pump() { turns += 1 }
        return turns
    }

    /// The earliest time at which a pump would move something (a packet's arrival, a flush deadline); nil when
    /// nothing is pending. A time at or before `now` means "pump now".
    package var nextDueTime: Double? {
        world.withLock { $0.nextDueTime() }
    }

    /// Kills every client as `MemoryBrokerClient.kill()` does: the streams end, so the tasks reading them return
    /// (a simulation ends this way; a task left waiting for an event would hold its client and the network).
    package func killAllClients() {
        mutate { world, now, effects in
            for client in world.clients.indices { world.kill(client, now: now, effects: &effects) }
        }
    }

    /// Runs `body` under the network's lock, then hands out what it produced. Never call back into the network
    /// from `body`.
    func mutate<Result, Failure: Error>(
        _ body: (inout MemoryWorld, Double, inout PumpEffects) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        let now = self.now()
        var effects = PumpEffects()
        let outcome: Swift.Result<Result, Failure> = world.withLock { world in
            do throws(Failure) {
                return .success(try body(&world, now, &effects))
            } catch {
                return .failure(error)
            }
        }
        deliver(effects)
        return try outcome.get()
    }

    /// Hands out a turn's effects outside the lock: events in the order they happened, then each client's
    /// acknowledgements in one batch (client creation order), then woken `disconnect` callers, then the streams of
    /// killed clients ended.
    private func deliver(_ effects: PumpEffects) {
        guard !effects.isEmpty else { return }
        for (observer, publication) in effects.publications { observer(publication) }
        for (observer, delivery) in effects.deliveries { observer(delivery) }
        // A turn touches few clients: one look-up each under the lock costs less than gathering them in a set
        // and a dictionary (which this did, at every turn).
        for (client, event) in effects.events {
            let queue = world.withLock { $0.clients[client].queue }
            if case .message(let message) = event {
                queue.offer(message)
            } else {
                queue.pushControl(event)
            }
        }
        for client in effects.acknowledgements.keys.sorted() {
            guard let ids = effects.acknowledgements[client],
                let handler = world.withLock({ $0.clients[client].handler })
            else { continue }
            handler.brokerAcknowledged(ids[...])
        }
        for waiter in effects.waiters { waiter.resume() }
        for client in effects.finished { world.withLock { $0.clients[client].queue }.finish() }
    }
}
