import AgentPorts
import Synchronization

/// What the control path and the acquisition threads share: each device's plan (with a generation that
/// changes with it) and its status. Touched once per refill by each thread, never per sample.
final class IIOSourceState: Sendable {
    struct Entry {
        var plan: DevicePlan = .off
        var generation = 0
        var status: IIODeviceStatus
    }

    private let entries: Mutex<[String: Entry]>
    private let running = Mutex(false)

    init(devices: [IIODeviceInfo]) {
        var map: [String: Entry] = [:]
        for device in devices {
            map[device.id] = Entry(status: IIODeviceStatus(id: device.id, name: device.name))
        }
        entries = Mutex(map)
    }

    /// Stores the new plans; returns the ids whose plan changed.
    func apply(_ plans: [String: DevicePlan], effectiveRates: [String: Double]) -> [String] {
        entries.withLock { map in
            var changed: [String] = []
            for id in map.keys.sorted() {
                let plan = plans[id] ?? .off
                guard map[id]!.plan != plan else { continue }
                map[id]!.plan = plan
                map[id]!.generation += 1
                map[id]!.status.requestedRateHz = plan.isOff ? 0 : plan.rateHz
                map[id]!.status.effectiveRateHz = plan.isOff ? nil : effectiveRates[id]
                if plan.isOff { map[id]!.status.state = .off }
                changed.append(id)
            }
            return changed
        }
    }

    func plan(for id: String) -> (plan: DevicePlan, generation: Int) {
        entries.withLock { map in
            let entry = map[id]!
            return (entry.plan, entry.generation)
        }
    }

    func counters(for id: String) -> SensorDeviceCounters {
        entries.withLock { $0[id]!.status.counters }
    }

    func generation(for id: String) -> Int {
        entries.withLock { $0[id]!.generation }
    }

    func update(_ id: String, _ body: (inout IIODeviceStatus) -> Void) {
        entries.withLock { map in body(&map[id]!.status) }
    }

    func statuses() -> [IIODeviceStatus] {
        entries.withLock { map in map.keys.sorted().map { map[$0]!.status } }
    }

    /// Marks a run as started; false when one already is.
    func beginRun() -> Bool {
        running.withLock { r in
            if r { return false }
            r = true
            return true
        }
    }

    func endRun() {
        running.withLock { $0 = false }
    }
}
