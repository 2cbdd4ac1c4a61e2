/// One run of the fault explorer, drawn from a seed: the fleet (devices, groups, brokers, signing, streams) and
/// a timed list of faults and operator actions over the schedule's minutes, ending in a quiet stretch where every
/// fault is healed and the invariants are checked. `description` prints it; the same seed draws it again, bit for
/// bit, whatever else the explorer ran before.
package struct FaultSchedule: Sendable, Codable, CustomStringConvertible {
    package enum Layer: Sendable, Hashable, Codable, CustomStringConvertible, Comparable {
        case fleet
        case group(String)
        case device(String)

        package var description: String {
            switch self {
            case .fleet: "fleet"
            case .group(let name): "group \(name)"
            case .device(let id): "device \(id)"
            }
        }
    }

    /// Where a command goes.
    package enum Target: Sendable, Hashable, Codable, CustomStringConvertible {
        case device(String)
        case group(String)
        case fleet

        package var description: String {
            switch self {
            case .device(let id): "device \(id)"
            case .group(let name): "group \(name)"
            case .fleet: "fleet"
            }
        }
    }

    /// How a message is signed when the fleet requires signatures.
    package enum Signing: String, Sendable, Codable {
        /// By the operator's key, as `fleet set` and `ctl --signing-key` sign.
        case signed
        /// Not at all: an attacker with write access to the topic (refused on a signing fleet).
        case unsigned
        /// Signed by a key the devices do not trust, under a trusted key's id.
        case forged
    }

    package enum Event: Sendable, Codable, CustomStringConvertible {
        /// The broker goes down for `seconds`, then starts with its store or without it.
        case brokerOutage(broker: String, seconds: Double, keepStore: Bool)
        /// A network fault on one device's connection.
        case dropConnection(device: String)
        /// SIGKILL; the device starts again after `downSeconds`.
        case kill(device: String, downSeconds: Double)
        /// SIGTERM (ordered shutdown); started again after `downSeconds`.
        case terminate(device: String, downSeconds: Double)
        /// The power goes: unsynced segment bytes may be lost (a `keepFraction` of them survives).
        case powerCut(device: String, downSeconds: Double, keepFraction: Double)
        /// The state directory's file system is full for `seconds`.
        case diskFull(device: String, seconds: Double)
        /// The real-time clock steps (NTP, an operator): every device's, since they share the world's clock.
        case clockStep(seconds: Double)
        /// A device's clock counts as unsynchronized for `seconds`.
        case clockUnsynchronized(device: String, seconds: Double)
        /// The device's connection stops reading what the broker sends it for `seconds` (a slow consumer).
        case slowConsumer(device: String, seconds: Double)
        /// A desired document (`json` without the version, which the operator numbers) on a layer.
        case desired(layer: Layer, settings: String, valid: Bool, signing: Signing)
        /// `{"version": N, "clear": true}`.
        case clear(layer: Layer, signing: Signing)
        /// An older document of the layer sent again (refused as older, or stale).
        case replayOldDesired(layer: Layer)
        /// A command (its members without `id`, which the operator adds).
        case command(target: Target, members: String, signing: Signing)
        /// `count` commands at once on one target: the rate limit and the inbox take them.
        case flood(target: Target, count: Int, signing: Signing)
        /// The Sparkplug primary host's STATE (schedules with `sparkplug`).
        case primaryHost(online: Bool)

        package var description: String {
            func s(_ value: Double) -> String { String(format: "%.1f", value) }
            switch self {
            case .brokerOutage(let broker, let seconds, let keep):
                return "broker \(broker) down \(s(seconds)) s, restarts \(keep ? "with" : "WITHOUT") its store"
            case .dropConnection(let device): return "\(device): connection dropped"
            case .kill(let device, let down): return "\(device): SIGKILL, restarted after \(s(down)) s"
            case .terminate(let device, let down): return "\(device): SIGTERM, restarted after \(s(down)) s"
            case .powerCut(let device, let down, let keep):
                return "\(device): power cut (\(Int(keep * 100)) % of unsynced bytes kept), back after \(s(down)) s"
            case .diskFull(let device, let seconds): return "\(device): disk full for \(s(seconds)) s"
            case .clockStep(let seconds): return "real-time clock steps \(s(seconds)) s"
            case .clockUnsynchronized(let device, let seconds):
                return "\(device): clock unsynchronized for \(s(seconds)) s"
            case .slowConsumer(let device, let seconds): return "\(device): reads nothing for \(s(seconds)) s"
            case .desired(let layer, let settings, let valid, let signing):
                return "desired \(layer) \(settings) (\(valid ? "valid" : "INVALID"), \(signing.rawValue))"
            case .clear(let layer, let signing): return "clear \(layer) (\(signing.rawValue))"
            case .replayOldDesired(let layer): return "replay an older document of \(layer)"
            case .command(let target, let members, let signing):
                return "command to \(target): \(members) (\(signing.rawValue))"
            case .flood(let target, let count, let signing):
                return "flood of \(count) commands on \(target) (\(signing.rawValue))"
            case .primaryHost(let online): return "Sparkplug primary host \(online ? "online" : "OFFLINE")"
            }
        }
    }

    package struct Step: Sendable, Codable {
        /// Seconds after the schedule's start.
        package var time: Double
        package var event: Event
    }

    package var seed: UInt64
    package var minutes: Double
    package var devices: [String]
    /// Per device, the groups it listens to (`control.groups`).
    package var groups: [String: [String]]
    package var brokers: [String]
    package var brokerPersistence: Bool
    package var signing: Bool
    package var fleet: SimulatedFleetConfiguration
    package var steps: [Step]
    /// The last stretch of the schedule, seconds: no faults, every part healed, then the checks.
    package var quietSeconds: Double
    /// The streams its documents and commands name.
    package var streamNames: [String]
    /// Whether the devices are also Sparkplug edge nodes (group `plant`, carrying the accelerometer) that wait
    /// for the primary host `scada`. nil in schedules kept before Sparkplug joined the explorer.
    package var sparkplug: Bool? = nil

    package var description: String {
        var lines = [
            "seed \(seed): \(minutes) min, devices \(devices.joined(separator: ", ")), brokers \(brokers.joined(separator: ", "))"
                + " (persistence \(brokerPersistence ? "on" : "off")), signing \(signing ? "on" : "off")",
            "  groups: \(devices.map { "\($0) \(groups[$0] ?? [])" }.joined(separator: ", "))"
                + (sparkplug == true ? "; Sparkplug edge nodes, primary host scada" : ""),
            "  streams: "
                + fleet.streams.map {
                    "\($0.name) \($0.rateHz) Hz qos \($0.qos)\($0.durable ? " durable" : "")\($0.batch > 1 ? " batch \($0.batch)" : "")"
                }.joined(separator: ", ") + ", metrics every \(fleet.metricsIntervalS) s",
        ]
        for step in steps { lines.append(String(format: "  %7.2f s  ", step.time) + step.event.description) }
        lines.append(
            String(
                format: "  %7.2f s  quiet: faults healed, invariants checked at the end",
                minutes * 60 - quietSeconds
            )
        )
        return lines.joined(separator: "\n")
    }
}
