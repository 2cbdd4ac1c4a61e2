import AgentConfig
import AgentControl
import AgentPorts
import Logging
import MemoryBroker
import MotionWire

/// Runs one `FaultSchedule` in a fresh `SimulationWorld` and checks the invariants at its end.
package struct ScheduleRun {
    /// What a run found.
    package struct Outcome: Sendable {
        package var schedule: FaultSchedule
        /// Every broken invariant, one sentence each; empty when the run held.
        package var violations: [String]
        /// Jobs the executor ran, messages the brokers took, commands sent.
        package var jobs: Int
        package var publications: Int
        package var commands: Int
        /// Process starts over all devices.
        package var starts: Int
        /// Samples the devices' sensors delivered.
        package var samples: Int = 0

        package var passed: Bool { violations.isEmpty }
    }

    package let schedule: FaultSchedule
    package var logger: Logger?

    package init(_ schedule: FaultSchedule, logger: Logger? = nil) {
        self.schedule = schedule
        self.logger = logger
    }

    /// The world as the schedule sets it up, before any step: for tests that drive a world themselves.
    package func run() -> Outcome {
        let world = SimulationWorld(logger: logger)
        // Nothing moves the clock while the world is set up: the schedule's times count from here.
        let origin = world.now
        let end = origin + schedule.minutes * 60
        let quietStart = end - schedule.quietSeconds
        let ledger = SimulationLedger(
            now: { [clock = world.clock] in clock.monotonicSeconds() },
            topicsFrom: quietStart
        )
        for name in schedule.brokers {
            let broker = world.addBroker(name: name, options: .init(persistence: schedule.brokerPersistence))
            ledger.observe(broker)
        }
        let key =
            schedule.signing ? try? OperatorSigningKey(id: "ops", privateKey: Self.keyBytes(schedule.seed, 1)) : nil
        let impostor = try? OperatorSigningKey(id: "ops", privateKey: Self.keyBytes(schedule.seed, 2))
        let trust = key.flatMap { try? OperatorKeys(TrustedKeyFile(keys: [($0.id, $0.publicKey)])) }
        var violations: [String] = []
        for (index, id) in schedule.devices.enumerated() {
            var fleet = schedule.fleet
            fleet.groups = schedule.groups[id] ?? []
            do {
                let configuration = try fleet.configuration(deviceID: id)
                world.addDevice(
                    id,
                    configuration: configuration,
                    trustedKeys: trust,
                    seed: schedule.seed &+ UInt64(index) &* 7919
                )
            } catch {
                return Outcome(
                    schedule: schedule,
                    violations: ["the simulated config.yaml of \(id) is invalid: \(error)"],
                    jobs: 0,
                    publications: 0,
                    commands: 0,
                    starts: 0
                )
            }
        }
        let operatorTool = SimulatedOperator(key: key, impostor: impostor)
        operatorTool.start(in: world)
        if schedule.sparkplug == true {
            world.schedule(at: origin + 0.2) { world in
                operatorTool.publishPrimaryHost(online: true, realtimeSeconds: world.clock.realtimeSeconds())
            }
        }
        for (index, device) in world.devices.enumerated() {
            world.schedule(at: origin + 0.5 + Double(index) * 0.1) { $0.start(device) }
        }
        Self.scheduleWriteBack(world, every: 5)
        var random = SimulationRandom(seed: schedule.seed ^ 0x5EED)
        for step in schedule.steps {
            let pick = random.fork()
            world.schedule(at: origin + step.time) { world in
                Self.perform(step.event, in: world, operator: operatorTool, random: pick)
            }
        }
        world.schedule(at: quietStart) { world in
            Self.heal(world, operator: operatorTool, sparkplug: schedule.sparkplug == true)
        }
        world.run(until: end)
        violations += Invariants(world: world, ledger: ledger, operatorTool: operatorTool, schedule: schedule)
            .check(quietSince: quietStart)
        defer { world.tearDown() }
        return Outcome(
            schedule: schedule,
            violations: violations,
            jobs: world.executor.jobsRun,
            publications: ledger.publications,
            commands: operatorTool.commandsSent,
            starts: world.devices.reduce(0) { $0 + $1.starts },
            samples: world.devices.reduce(0) { $0 + $1.samplesDelivered }
        )
    }

    static func keyBytes(_ seed: UInt64, _ salt: UInt64) -> [UInt8] {
        var random = SimulationRandom(seed: seed &* 0x9E37 &+ salt)
        return (0..<32).map { _ in UInt8(truncatingIfNeeded: random.next()) }
    }

    /// The kernel's periodic write-back of dirty pages on every device.
    static func scheduleWriteBack(_ world: SimulationWorld, every seconds: Double) {
        world.schedule(after: seconds) { world in
            for device in world.devices { device.disk.writeBack() }
            scheduleWriteBack(world, every: seconds)
        }
    }

    static func clientID(_ device: String) -> String { "motion-agent-\(device)" }

    /// Starts `device` again; a process still shutting down is killed first, as systemd does past its stop timeout.
    static func restart(_ device: SimulatedAgent, in world: SimulationWorld) {
        if device.process?.alive == true, device.process?.ended == nil { return }
        if device.process?.alive == true { world.kill(device) }
        world.start(device)
    }

    static func perform(
        _ event: FaultSchedule.Event,
        in world: SimulationWorld,
        operator operatorTool: SimulatedOperator,
        random: SimulationRandom
    ) {
        var random = random
        switch event {
        case .brokerOutage(let name, let seconds, let keepStore):
            guard let broker = world.broker(named: name), broker.isRunning else { return }
            broker.stop(keepingStore: keepStore)
            world.schedule(after: seconds) { _ in broker.start() }
        case .dropConnection(let device):
            for broker in world.brokers { broker.dropConnection(clientID: clientID(device)) }
        case .kill(let id, let down):
            guard let device = world.device(id), device.isRunning else { return }
            world.kill(device)
            world.schedule(after: down) { world in restart(device, in: world) }
        case .terminate(let id, let down):
            guard let device = world.device(id), device.isRunning else { return }
            world.terminate(device)
            world.schedule(after: down) { world in restart(device, in: world) }
        case .powerCut(let id, let down, let keepFraction):
            guard let device = world.device(id) else { return }
            world.powerCut(device) { unsynced in Int(Double(unsynced) * keepFraction) }
            world.schedule(after: down) { world in restart(device, in: world) }
        case .diskFull(let id, let seconds):
            guard let device = world.device(id) else { return }
            device.disk.capacityBytes = device.disk.usedBytes + 2048
            world.schedule(after: seconds) { _ in device.disk.capacityBytes = nil }
        case .clockStep(let seconds):
            world.clock.stepRealtime(by: seconds)
        case .clockUnsynchronized(let id, let seconds):
            guard let process = world.device(id)?.process else { return }
            process.host.setClockSynchronized(false)
            world.schedule(after: seconds) { _ in process.host.setClockSynchronized(true) }
        case .slowConsumer(let id, let seconds):
            for broker in world.brokers {
                broker.setStalled(clientID: clientID(id), towardsBroker: false, towardsClient: true)
            }
            world.schedule(after: seconds) { world in
                for broker in world.brokers {
                    broker.setStalled(clientID: clientID(id), towardsBroker: false, towardsClient: false)
                }
            }
        case .desired(let layer, let settings, let valid, let signing):
            operatorTool.publishDesired(layer, settings: settings, valid: valid, signing: signing)
        case .clear(let layer, let signing):
            operatorTool.publishDesired(layer, settings: nil, clear: true, valid: signing == .signed, signing: signing)
        case .replayOldDesired(let layer):
            operatorTool.replayOld(layer) { count in random.int(0...(count - 1)) }
        case .command(let target, let members, let signing):
            operatorTool.command(target, members: members, signing: signing)
        case .flood(let target, let count, let signing):
            for _ in 0..<count {
                operatorTool.command(target, members: "\"command\": \"ping\"", signing: signing)
            }
        case .primaryHost(let online):
            operatorTool.publishPrimaryHost(online: online, realtimeSeconds: world.clock.realtimeSeconds())
        }
    }

    /// The quiet stretch begins: every broker runs, every device runs with room on its disk, a synchronized clock
    /// and a connection that reads, and the newest document of every layer is one the devices apply.
    static func heal(_ world: SimulationWorld, operator operatorTool: SimulatedOperator, sparkplug: Bool = false) {
        for broker in world.brokers where !broker.isRunning { broker.start() }
        for device in world.devices {
            device.disk.capacityBytes = nil
            for broker in world.brokers {
                broker.setStalled(clientID: clientID(device.deviceID), towardsBroker: false, towardsClient: false)
            }
            restart(device, in: world)
            device.process?.host.setClockSynchronized(true)
        }
        operatorTool.healDocuments()
        if sparkplug {
            operatorTool.publishPrimaryHost(online: true, realtimeSeconds: world.clock.realtimeSeconds())
        }
    }
}
