import AgentConfig
import AgentControl
import AgentPipeline
import AgentPorts
import Foundation
import MemoryBroker
import MotionWire

/// What must hold at the end of every schedule, after its quiet stretch: each sentence a violation names the
/// device, what was expected and what was found.
///
/// - The simulation stayed deterministic: no job came from another thread, nothing spun without time passing.
/// - No durable message lost: every record a device's durable log wrote — and a power cut did not cut before
///   the kernel wrote it back, nor the log drop (counted) to make room on a full disk — reached a broker.
/// - Every command answered at most once.
/// - What the device says is in force is in force: a stream whose configuration says `durable` has its durable
///   log open; the retained status and configuration are the ones the device would compose now; each enabled
///   stream publishes at its effective rate.
/// - No unexplained gap in a stream's `seq`: the samples taken in the quiet stretch, when no fault explains a
///   loss, all reached a broker, their `seq` rising by one from sample to sample (duplicates from QoS 1 resends
///   allowed); a drop the agent counted (a full outbox) is named, not excused.
/// - A Sparkplug edge node is born again by the end, its `seq` runs without a gap from its last NBIRTH, and its
///   DDATA flows while its primary host is online.
/// - Every device converged on the newest document of every layer it listens to.
/// - Bounded: every outbox and durable log drained, and no timers piling up.
struct Invariants {
    let world: SimulationWorld
    let ledger: SimulationLedger
    let operatorTool: SimulatedOperator
    let schedule: FaultSchedule

    func check(quietSince quietStart: Double) -> [String] {
        var violations: [String] = []
        if world.executor.foreignEnqueues > 0 {
            violations.append(
                "determinism: \(world.executor.foreignEnqueues) jobs reached the simulation from another thread (a real timer or thread in the agent)"
            )
        }
        if world.livelocks > 0 {
            violations.append("liveness: \(world.livelocks) times the world kept moving without time passing (a spin)")
        }
        for device in world.devices {
            violations += durableDelivery(device)
            guard let process = device.process, process.alive, process.ended == nil else {
                violations.append(
                    "\(device.deviceID): not running at the end of the quiet stretch (\(String(describing: device.process?.ended)))"
                )
                continue
            }
            violations += inForce(device, process)
            violations += convergence(device, process)
            violations += rates(device, process, since: max(quietStart, world.now - 40))
            violations += sequences(device, since: quietStart + 5, until: world.now - 5)
            if schedule.sparkplug == true { violations += sparkplug(device, process) }
            violations += drained(device, process)
        }
        for (key, count) in ledger.replies.sorted(by: { $0.key < $1.key }) where count > 1 {
            violations.append("command \(key) was answered \(count) times")
        }
        let sleepers = world.clock.sleepers
        if sleepers > 40 * world.devices.count + 10 {
            violations.append("bounded: \(sleepers) tasks asleep on the clock for \(world.devices.count) devices")
        }
        return violations
    }

    private func durableDelivery(_ device: SimulatedAgent) -> [String] {
        var lost: [SimulatedDisk.Record] = []
        for record in device.disk.records where record.fate == .written && !record.removedWhileFull {
            if !ledger.accepted(topic: record.topic, payload: record.payload) { lost.append(record) }
        }
        guard !lost.isEmpty else { return [] }
        let sample = lost.prefix(3).map { "\($0.topic) \(String(decoding: $0.payload.prefix(80), as: UTF8.self))" }
        return [
            "\(device.deviceID): \(lost.count) durable records written to its log never reached a broker, e.g. \(sample.joined(separator: "; "))"
        ]
    }

    private func inForce(_ device: SimulatedAgent, _ process: SimulatedAgent.Process) -> [String] {
        var violations: [String] = []
        let effective = process.reconciler.effective
        let durableOpen = process.publisher.durableCounters != nil
        for name in StreamName.allCases {
            let settings = effective[stream: name]
            if settings.enabled, settings.durable, settings.qos > 0, !durableOpen {
                violations.append(
                    "\(device.deviceID): \(name.rawValue) is durable in the configuration in force (\(process.reconciler.status().settings["streams.\(name.rawValue).durable"]?.source ?? "?")) but no durable log is open"
                )
            }
        }
        let topics = TopicScheme(root: "motion/\(device.deviceID)")
        // The brokers of a failover pair here keep their retained stores apart (no cluster): what the device
        // says is on the broker it is connected to.
        let home = world.brokers.first { $0.connectedClientIDs.contains(ScheduleRun.clientID(device.deviceID)) }
        guard let home else {
            return violations + ["\(device.deviceID): connected to no broker at the end of the quiet stretch"]
        }
        func retainedPayload(_ topic: String) -> [UInt8]? { home.retainedMessage(topic: topic)?.payload }
        if let retained = retainedPayload(topics.status) {
            if let status = try? JSONDecoder().decode(AgentStatus.self, from: Data(retained)) {
                if status.state != .online {
                    violations.append(
                        "\(device.deviceID): its retained status says \(status.state), though it runs and is connected"
                    )
                }
                for name in StreamName.allCases {
                    let now = process.controller.streamStatus(name)
                    guard let said = status.streams?[name.rawValue] else { continue }
                    if said.enabled != now.enabled || said.rateHz != now.rateHz || said.qos != now.qos
                        || said.batch != now.batch
                    {
                        violations.append(
                            "\(device.deviceID): retained status says \(name.rawValue) enabled \(said.enabled) at \(said.rateHz) Hz qos \(said.qos) batch \(said.batch); in force: enabled \(now.enabled) at \(now.rateHz) Hz qos \(now.qos) batch \(now.batch)"
                        )
                    }
                }
            } else {
                violations.append("\(device.deviceID): its retained status is not a status document")
            }
        } else {
            violations.append("\(device.deviceID): no retained status at the end")
        }
        if let retained = retainedPayload(topics.configuration),
            let said = try? JSONDecoder().decode(ConfigurationStatus.self, from: Data(retained))
        {
            let now = process.reconciler.status()
            for (key, setting) in now.settings.sorted(by: { $0.key < $1.key })
            where said.settings[key]?.value != setting.value {
                violations.append(
                    "\(device.deviceID): retained configuration says \(key) = \(said.settings[key]?.value ?? "nothing"); in force: \(setting.value) (\(setting.source))"
                )
            }
            if said.desired != now.desired {
                violations.append(
                    "\(device.deviceID): retained configuration names versions \(said.desired); in force: \(now.desired)"
                )
            }
        } else {
            violations.append("\(device.deviceID): no readable retained configuration at the end")
        }
        return violations
    }

    private func convergence(_ device: SimulatedAgent, _ process: SimulatedAgent.Process) -> [String] {
        var violations: [String] = []
        let applied = process.reconciler.documentVersions
        let newest = operatorTool.newest
        var layers: [(FaultSchedule.Layer, ConfigurationLayer)] = [
            (.fleet, .fleet), (.device(device.deviceID), .device),
        ]
        for group in schedule.groups[device.deviceID] ?? [] { layers.append((.group(group), .group(group))) }
        // A document valid on its own can still be refused on a device where, layered with the others, it makes
        // an invalid configuration (durable without QoS): converging is applying the newest or refusing it, said.
        let refused = process.reconciler.refusedVersions
        for (layer, configurationLayer) in layers {
            guard let published = newest[layer] else { continue }
            let version = applied[configurationLayer]
            let refusedNewest = refused[configurationLayer] == published.version
            if version != published.version && !refusedNewest {
                violations.append(
                    "\(device.deviceID): runs \(layer) document version \(version.map(String.init) ?? "none"), the newest published is \(published.version)"
                )
            }
        }
        return violations
    }

    /// Each enabled stream publishes at its effective rate over the last stretch (batches count once per batch).
    private func rates(_ device: SimulatedAgent, _ process: SimulatedAgent.Process, since start: Double) -> [String] {
        var violations: [String] = []
        let seconds = world.now - start
        guard seconds >= 20 else { return [] }
        let topics = TopicScheme(root: "motion/\(device.deviceID)")
        for name in schedule.streamNames {
            guard let stream = StreamName(rawValue: name) else { continue }
            let status = process.controller.streamStatus(stream)
            let settings = process.reconciler.effective[stream: stream]
            guard settings.enabled, status.rateHz > 0 else { continue }
            let expected = status.rateHz * seconds / Double(max(1, settings.batch))
            let seen = Double(ledger.arrivals(on: topics.stream(stream), since: start))
            if abs(seen - expected) > 0.2 * expected + 3 {
                violations.append(
                    "\(device.deviceID): \(name) published \(Int(seen)) messages in the last \(Int(seconds)) s; at its effective \(status.rateHz) Hz (batch \(settings.batch)) about \(Int(expected.rounded())) were due"
                )
            }
        }
        return violations
    }

    private func sparkplug(_ device: SimulatedAgent, _ process: SimulatedAgent.Process) -> [String] {
        let messages = ledger.sparkplug(node: device.deviceID)
        guard let birth = messages.lastIndex(where: { $0.type == "NBIRTH" }) else {
            return ["\(device.deviceID): the Sparkplug edge node was never born"]
        }
        var violations: [String] = []
        let since = messages[birth...]
        if let death = since.firstIndex(where: { $0.type == "NDEATH" }) {
            violations.append(
                "\(device.deviceID): the edge node's last NBIRTH (at \(messages[birth].arrival)) was followed by an NDEATH (at \(messages[death].arrival)) and no birth after the quiet stretch's STATE online"
            )
        }
        var expected: UInt64 = 0
        for message in since where message.type != "NDEATH" {
            guard message.seq == expected else {
                violations.append(
                    "\(device.deviceID): Sparkplug seq \(message.seq.map(String.init) ?? "none") on \(message.type) at \(message.arrival), \(expected) was next after the NBIRTH at \(messages[birth].arrival)"
                )
                break
            }
            expected = (expected + 1) % 256
        }
        let accelerometer = process.controller.streamStatus(.accelerometer)
        if process.reconciler.effective[stream: .accelerometer].enabled, accelerometer.rateHz > 0,
            !since.contains(where: { $0.type == "DDATA" && $0.arrival >= world.now - 20 })
        {
            violations.append(
                "\(device.deviceID): no DDATA in the last 20 s with the accelerometer at \(accelerometer.rateHz) Hz and the primary host online"
            )
        }
        return violations
    }

    /// The samples taken between `start` and `end` (by their own timestamp) reached a broker without a gap.
    private func sequences(_ device: SimulatedAgent, since start: Double, until end: Double) -> [String] {
        guard end - start >= 10 else { return [] }
        var violations: [String] = []
        let topics = TopicScheme(root: "motion/\(device.deviceID)")
        for name in schedule.streamNames {
            guard let stream = StreamName(rawValue: name) else { continue }
            let taken = ledger.samples(on: topics.stream(stream)).filter { $0.timestamp >= start && $0.timestamp < end }
            let seqs = Set(taken.map(\.seq))
            guard let low = seqs.min(), let high = seqs.max() else { continue }
            let missing = high - low + 1 - seqs.count
            if missing > 0 {
                let holes = (low...high).lazy.filter { !seqs.contains($0) }.prefix(5).map(String.init)
                violations.append(
                    "\(device.deviceID): \(name) samples taken in the quiet stretch miss \(missing) seq between \(low) and \(high) (first: \(holes.joined(separator: ", ")))"
                )
            }
        }
        return violations
    }

    private func drained(_ device: SimulatedAgent, _ process: SimulatedAgent.Process) -> [String] {
        var violations: [String] = []
        let memory = process.services.parts.outbox.snapshot
        if memory.depth > 0 {
            violations.append(
                "\(device.deviceID): \(memory.depth) messages still in the memory outbox after the quiet stretch"
            )
        }
        if let durable = process.publisher.durableCounters, durable.depth > 0 {
            violations.append(
                "\(device.deviceID): \(durable.depth) records still in the durable log after the quiet stretch"
            )
        }
        return violations
    }

}
