import AgentConfig
import AgentControl
import AgentPorts
import Logging
import MemoryBroker

/// A whole deployment in one process on virtual time: brokers on one in-memory network, devices running the
/// production agent, an operator, and whoever listens — all driven by one loop on one thread, deterministic for a
/// seed.
///
/// The loop: run every runnable job (the agents' tasks), pump the network, turn the agents' publishers, and
/// repeat until nothing moves; then advance the clock to the earliest of the sleepers' deadlines, the network's
/// next packet, the publishers' next turn and the next scheduled action, and run what is due. Ten simulated
/// minutes of an idle fleet take as many steps as it has timers.
package final class SimulationWorld: @unchecked Sendable {
    package let clock: VirtualClock
    package let executor: SimulationExecutor
    package let network: MemoryNetwork
    package private(set) var brokers: [MemoryBroker] = []
    package private(set) var devices: [SimulatedAgent] = []
    let logger: Logger

    private struct Action {
        var time: Double
        var order: UInt64
        var run: (SimulationWorld) -> Void
    }

    private var actions: [Action] = []
    private var actionOrder: UInt64 = 0
    private var publisherWakes: [Double] = []
    /// Rounds of `settle` that hit the limit: something kept moving without time passing (a livelock).
    package private(set) var livelocks = 0

    package init(start: Double = 100, realtimeStart: Double = 1_790_000_000, logger: Logger? = nil) {
        clock = VirtualClock(start: start, realtimeStart: realtimeStart)
        executor = SimulationExecutor()
        let clock = self.clock
        network = MemoryNetwork(now: { clock.monotonicSeconds() })
        var quiet = Logger(label: "motion-agent.simulation", factory: { _ in SwiftLogNoOpLogHandler() })
        quiet.logLevel = .critical
        self.logger = logger ?? quiet
    }

    /// Seconds of simulated time since the start.
    package var now: Double { clock.monotonicSeconds() }

    // MARK: Parts

    /// A broker on the world's network, reached as `name:port`.
    @discardableResult
    package func addBroker(name: String, options: MemoryBroker.Options = MemoryBroker.Options()) -> MemoryBroker {
        let broker = MemoryBroker(name: name, options: options, network: network)
        brokers.append(broker)
        return broker
    }

    package func broker(named name: String) -> MemoryBroker? { brokers.first { $0.name == name } }

    /// A device with its own disk, not yet started.
    @discardableResult
    package func addDevice(
        _ deviceID: String,
        configuration: AgentConfiguration,
        trustedKeys: OperatorKeys? = nil,
        seed: UInt64,
        logger: Logger? = nil
    ) -> SimulatedAgent {
        var deviceLogger = logger ?? self.logger
        deviceLogger[metadataKey: "agent.device"] = "\(deviceID)"
        let device = SimulatedAgent(
            deviceID: deviceID,
            configuration: configuration,
            disk: SimulatedDisk(),
            trustedKeys: trustedKeys,
            seed: seed,
            logger: deviceLogger
        )
        devices.append(device)
        return device
    }

    package func device(_ id: String) -> SimulatedAgent? { devices.first { $0.deviceID == id } }

    /// A client on the world's network (operators, subscribers); `connect` it with a broker's `connectOptions`.
    package func makeClient(readsPerPump: Int = .max) -> MemoryBrokerClient {
        guard let first = brokers.first else {
            preconditionFailure("add a broker before making clients")
        }
        return first.makeClient(readsPerPump: readsPerPump)
    }

    // MARK: Processes

    /// Starts a process of `device` (a first boot, or a restart after `kill`, `powerCut` or `terminate`).
    package func start(_ device: SimulatedAgent) {
        let client = makeClient()
        // Sparkplug's edge node has a connection of its own, as in production (its will is the NDEATH).
        let sparkplugClient = device.configuration.sparkplug.enabled ? makeClient() : nil
        executor.run {
            device.start(clock: clock, executor: executor, client: client, sparkplugClient: sparkplugClient)
        }
    }

    /// SIGKILL: the process ends at once.
    package func kill(_ device: SimulatedAgent) { executor.run { device.kill() } }

    /// A power cut: the process ends, the disk keeps what was written back and a prefix of the rest.
    package func powerCut(_ device: SimulatedAgent, keep: (Int) -> Int) { executor.run { device.powerCut(keep: keep) } }

    /// SIGTERM: the ordered shutdown (it completes as the world runs).
    package func terminate(_ device: SimulatedAgent) { executor.run { device.terminate(executor: executor) } }

    // MARK: Scheduling

    /// Runs `action` when the clock reaches `time` (at once if it has), in the order actions were scheduled.
    package func schedule(at time: Double, _ action: @escaping (SimulationWorld) -> Void) {
        actionOrder += 1
        let entry = Action(time: time, order: actionOrder, run: action)
        let index = actions.firstIndex { ($0.time, $0.order) > (entry.time, entry.order) } ?? actions.count
        actions.insert(entry, at: index)
    }

    /// Runs `action` `seconds` from now.
    package func schedule(after seconds: Double, _ action: @escaping (SimulationWorld) -> Void) {
        schedule(at: now + seconds, action)
    }

    // MARK: The loop

    /// Runs the world until the clock reads `end` (monotonic seconds).
    package func run(until end: Double) {
        executor.run {
            while true {
                let wake = settle()
                var next = min(clock.nextDeadline ?? .infinity, network.nextDueTime ?? .infinity)
                next = min(next, actions.first?.time ?? .infinity, wake ?? .infinity)
                if next > end {
                    clock.advance(to: end)
                    _ = settle()
                    return
                }
                clock.advance(to: max(next, now))
                while let first = actions.first, first.time <= now {
                    actions.removeFirst()
                    first.run(self)
                }
            }
        }
    }

    /// Ends the simulation: every process and every client is killed and their tasks unwind. A task left asleep on
    /// the virtual clock or waiting for a client's events would hold what it reads — a process's whole service
    /// graph, a tool, the network — for as long as the program runs: an explorer running thousands of worlds in
    /// one process must end each one.
    package func tearDown() {
        executor.run {
            for device in devices { device.kill() }
            network.killAllClients()
            _ = settle()
        }
    }

    /// Runs the world for `seconds` of simulated time.
    package func run(for seconds: Double) { run(until: now + seconds) }

    /// Runs jobs, pumps and turns until nothing moves; returns the earliest time a publisher asked to be turned.
    private func settle() -> Double? {
        var wake: Double?
        var rounds = 0
        while true {
            rounds += 1
            var moved = executor.runUntilIdle() > 0
            moved = network.pump() || moved
            wake = nil
            for device in devices {
                let turned = device.turnPublisher()
                moved = turned.moved || moved
                if let due = turned.wake { wake = min(wake ?? due, due) }
            }
            if !moved { break }
            if rounds >= 100_000 {
                livelocks += 1
                break
            }
        }
        // A wake at or before now would spin: a paced publisher is turned again once time has moved on.
        if let due = wake, due <= now { return now + 0.001 }
        return wake
    }
}

extension MemoryBrokerClient: SimulatedBrokerClient {}
