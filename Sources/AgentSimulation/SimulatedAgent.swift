import AgentConfig
import AgentControl
import AgentPipeline
import AgentPorts
import AgentRuntime
import Logging
import ServiceLifecycle

/// One device of the simulation: its configuration and its disk, which outlive the agent's processes, and the
/// process running now — the production composition root (`AgentBuilder`) and its `ServiceGroup`, on the
/// simulation's executor and clock, with an in-memory broker client, a virtual IMU and the simulated disk.
///
/// A process ends the ways a real one does: `terminate()` is SIGTERM (the ordered shutdown: drain, goodbye,
/// disconnect), `kill()` is SIGKILL or a crash (the connection drops, the broker publishes the will, written
/// files stay), `powerCut` loses what the kernel had not written back as well. A dead process's tasks are
/// cancelled and unwind, but nothing they do reaches the broker or the disk any more.
package final class SimulatedAgent: @unchecked Sendable {
    package let deviceID: String
    package let configuration: AgentConfiguration
    package let disk: SimulatedDisk
    let trustedKeys: OperatorKeys?
    let logger: Logger
    /// Seeds each start's random choices and the IMU's noise.
    let seed: UInt64

    /// A running (or ended) process of the agent.
    package final class Process: @unchecked Sendable {
        package let start: Int
        package let client: any SimulatedBrokerClient
        /// The Sparkplug edge node's own connection (`sparkplug.enabled`), or nil.
        package let sparkplugClient: (any SimulatedBrokerClient)?
        let clock: VirtualClock
        package let directory: SimulatedStateDirectory
        package let host: SimulatedHost
        package let source: VirtualSensorSource
        package let services: AgentServices
        let group: ServiceGroup
        var task: Task<Void, Never>?
        /// Set when `run` returned: nil, or the error the group ended with.
        package internal(set) var ended: Result<Void, any Error>?
        package internal(set) var alive = true

        init(
            start: Int,
            client: any SimulatedBrokerClient,
            sparkplugClient: (any SimulatedBrokerClient)?,
            clock: VirtualClock,
            directory: SimulatedStateDirectory,
            host: SimulatedHost,
            source: VirtualSensorSource,
            services: AgentServices,
            group: ServiceGroup
        ) {
            self.start = start
            self.client = client
            self.sparkplugClient = sparkplugClient
            self.clock = clock
            self.directory = directory
            self.host = host
            self.source = source
            self.services = services
            self.group = group
        }

        package var publisher: OutboxPublisher { services.parts.publisher }
        package var controller: AgentController { services.parts.controller }
        package var reconciler: ConfigurationReconciler { services.parts.reconciler }

        /// The process's connections die with it: the brokers see them drop and publish their wills.
        func killConnections() {
            client.kill()
            sparkplugClient?.kill()
        }
    }

    package private(set) var process: Process?
    package private(set) var starts = 0
    /// config.yaml on the device's real file system, for `reload-config` (nil: the command is refused, as for an
    /// agent built without a file). Read by each start.
    package var configurationPath: String?
    private var samplesOfEndedProcesses = 0

    /// Samples the device's sensors delivered over all its processes.
    package var samplesDelivered: Int { samplesOfEndedProcesses + (process?.source.delivered ?? 0) }

    init(
        deviceID: String,
        configuration: AgentConfiguration,
        disk: SimulatedDisk,
        trustedKeys: OperatorKeys?,
        seed: UInt64,
        logger: Logger
    ) {
        self.deviceID = deviceID
        self.configuration = configuration
        self.disk = disk
        self.trustedKeys = trustedKeys
        self.seed = seed
        self.logger = logger
    }

    /// Whether a process runs.
    package var isRunning: Bool { process?.alive == true && process?.ended == nil }

    /// Starts a process: builds the agent as `motion-agent run` does and runs its service group as a task on
    /// `executor`.
    func start(
        clock: VirtualClock,
        executor: SimulationExecutor,
        client: any SimulatedBrokerClient,
        sparkplugClient: (any SimulatedBrokerClient)? = nil
    ) {
        starts += 1
        samplesOfEndedProcesses += process?.source.delivered ?? 0
        let directory = disk.directory()
        let host = SimulatedHost(directory: directory)
        let source = VirtualSensorSource(clock: clock, seed: seed &+ UInt64(starts))
        var options = AgentBuilder.Options()
        options.publisherDrive = .turns
        options.reloadsOnHangup = false
        options.randomSeed = seed &* 31 &+ UInt64(starts)
        options.outboxBytes = 256 << 10
        options.taskExecutor = executor
        let builder = AgentBuilder(
            configuration: configuration,
            source: source,
            broker: client,
            sparkplugBroker: sparkplugClient,
            state: directory,
            password: nil,
            configurationPath: configurationPath,
            trustedKeys: trustedKeys,
            host: host,
            clock: clock,
            logger: logger,
            options: options
        )
        let services = builder.build()
        let group = services.serviceGroup(logger: logger)
        let process = Process(
            start: starts,
            client: client,
            sparkplugClient: sparkplugClient,
            clock: clock,
            directory: directory,
            host: host,
            source: source,
            services: services,
            group: group
        )
        self.process = process
        process.task = Task(executorPreference: executor) {
            do {
                try await group.run()
                process.ended = .success(())
            } catch {
                process.ended = .failure(error)
            }
        }
    }

    /// SIGTERM: the ordered shutdown.
    func terminate(executor: SimulationExecutor) {
        guard let process, process.alive else { return }
        Task(executorPreference: executor) { await process.group.triggerGracefulShutdown() }
    }

    /// SIGKILL or a crash: the process is gone at once; what it wrote stays on disk.
    func kill() {
        guard let process, process.alive else { return }
        process.alive = false
        process.killConnections()
        disk.processDied()
        process.task?.cancel()
    }

    /// The power went: the process is gone and the disk keeps only what was written back, plus a prefix of the
    /// rest that `keep` chooses.
    func powerCut(keep: (Int) -> Int) {
        guard let process else {
            disk.powerCut(keep: keep)
            return
        }
        if process.alive {
            process.alive = false
            process.killConnections()
            process.task?.cancel()
        }
        disk.powerCut(keep: keep)
    }

    /// Turns the publisher's loops until they wait; returns whether anything moved, and the earliest monotonic
    /// time at which a loop asked to be turned again (the replay pace, the log's upkeep).
    func turnPublisher() -> (moved: Bool, wake: Double?) {
        let sparkplug = turnSparkplug()
        let native = turnNativePublisher()
        let wake: Double? =
            switch (sparkplug.wake, native.wake) {
            case (let a?, let b?): min(a, b)
            case (let a, let b): a ?? b
            }
        return (sparkplug.moved || native.moved, wake)
    }

    /// Turns the Sparkplug drainer while it sends; a body the client did not take is tried again 50 ms later,
    /// as the drainer thread does.
    private func turnSparkplug() -> (moved: Bool, wake: Double?) {
        guard let process, process.alive, let sparkplug = process.services.parts.sparkplug else { return (false, nil) }
        var moved = false
        for _ in 0..<10_000 {
            switch sparkplug.drainTurn() {
            case .sent: moved = true
            case .kept: return (moved, process.clock.monotonicSeconds() + 0.05)
            case .held, .idle, .stopped: return (moved, nil)
            }
        }
        return (moved, nil)
    }

    private func turnNativePublisher() -> (moved: Bool, wake: Double?) {
        guard let process, process.alive, process.publisher.isRunning else { return (false, nil) }
        let publisher = process.publisher
        guard publisher.hasWork || publisher.hasDurableWork else { return (false, nil) }
        var moved = false
        var wake: Double?
        var turns = 0
        loop: while turns < 10_000 {
            turns += 1
            switch process.publisher.publishTurn() {
            case .sent: moved = true
            case .paced(let until):
                wake = until
                break loop
            case .idle, .windowFull, .waitingForConnection: break loop
            }
        }
        while turns < 20_000, process.publisher.writeTurn() == .wrote {
            turns += 1
            moved = true
        }
        if case .idle(let due) = process.publisher.writeTurn(), due.isFinite, process.publisher.hasDurableWork {
            wake = min(wake ?? due, due)
        }
        return (moved, wake)
    }
}

/// The in-memory broker's client as the simulation uses it: the agent's `BrokerClient`, and a way to make it
/// vanish as a killed process's connection does.
package protocol SimulatedBrokerClient: BrokerClient {
    /// The process holding it died: nothing it does afterwards reaches the broker, which sees the connection
    /// drop (and publishes the will).
    func kill()
}
