extension FaultSchedule {
    /// The streams a schedule's documents and commands draw from: raw streams at the rates fleets use. Device
    /// motion joins them in a tenth of the schedules (`estimator`): its filter runs the hardware at 100 Hz whatever
    /// the stream's own rate, twenty times the samples of a raw stream — the explorer is after the control and
    /// delivery paths; the estimators' accuracy and cost are measured on recordings (BENCHMARKS.md).
    static let rawStreamNames = ["accelerometer", "gyroscope", "magnetometer"]

    /// config.yaml's Sparkplug section for a schedule whose devices are edge nodes.
    static let sparkplugSection = """
        sparkplug:
          enabled: true
          group_id: plant
          primary_host_id: \(SimulatedOperator.primaryHostID)
          streams: [accelerometer]

        """

    /// Draws the schedule of `seed`: `minutes` long, the last `quietSeconds` without faults.
    package static func draw(seed: UInt64, minutes: Double = 10, quietSeconds: Double = 90) -> FaultSchedule {
        var random = SimulationRandom(seed: seed)
        var setup = random.fork()
        let deviceCount = setup.int(1...3)
        let devices = (1...deviceCount).map { "d\($0)" }
        var groups: [String: [String]] = [:]
        for device in devices { groups[device] = setup.chance(0.6) ? ["g1"] : [] }
        let brokers = setup.chance(0.25) ? ["broker-a", "broker-b"] : ["broker-a"]
        var fleet = SimulatedFleetConfiguration()
        fleet.brokers = brokers
        fleet.metricsIntervalS = setup.pick([10, 30, 60])
        fleet.reconnectMaxDelay = setup.pick([5, 10, 30])
        var streams: [SimulatedFleetConfiguration.Stream] = []
        let accelerometerQoS = setup.chance(0.6) ? 1 : 0
        streams.append(
            .init(
                "accelerometer",
                rateHz: setup.pick([1, 2, 5]),
                qos: accelerometerQoS,
                durable: accelerometerQoS == 1 && setup.chance(0.5),
                batch: setup.chance(0.2) ? 2 : 1
            )
        )
        if setup.chance(0.5) { streams.append(.init("gyroscope", rateHz: setup.pick([1, 2]), qos: setup.int(0...1))) }
        let estimator = setup.chance(0.1)
        if estimator { streams.append(.init("device-motion", rateHz: 1, qos: setup.int(0...1))) }
        fleet.streams = streams
        let schedule = FaultSchedule(
            seed: seed,
            minutes: minutes,
            devices: devices,
            groups: groups,
            brokers: brokers,
            brokerPersistence: setup.chance(0.5),
            signing: setup.chance(0.3),
            fleet: fleet,
            steps: [],
            quietSeconds: quietSeconds,
            streamNames: Self.rawStreamNames + (estimator ? ["device-motion"] : [])
        )
        var events = random.fork()
        var steps: [Step] = []
        let busy = max(10, minutes * 60 - quietSeconds)
        let count = events.int(Int(minutes * 2)...Int(minutes * 5))
        for _ in 0..<count {
            let time = events.double(5...busy)
            steps.append(Step(time: time, event: schedule.drawEvent(&events, until: busy - time)))
        }
        var drawn = schedule
        // Drawn after everything else, from a stream of its own, so the schedules of seeds kept before Sparkplug
        // joined are drawn the same.
        var sparkplugDraw = random.fork()
        if sparkplugDraw.chance(0.15) {
            drawn.sparkplug = true
            drawn.fleet.extra += Self.sparkplugSection
            for _ in 0..<sparkplugDraw.int(1...4) {
                let time = sparkplugDraw.double(5...busy)
                steps.append(Step(time: time, event: .primaryHost(online: false)))
                let back = min(busy, time + sparkplugDraw.double(1...60))
                steps.append(Step(time: back, event: .primaryHost(online: true)))
            }
        }
        steps.sort { $0.time < $1.time }
        drawn.steps = steps
        return drawn
    }

    private func drawEvent(_ random: inout SimulationRandom, until left: Double) -> Event {
        let device = random.pick(devices)
        let longest = max(1, min(60, left))
        /// A duration between `low` and `high` that ends before the quiet stretch where it can.
        func duration(_ low: Double, _ high: Double) -> Double {
            random.double(low...max(low, min(high, longest)))
        }
        let signing: Signing = signing ? (random.chance(0.85) ? .signed : random.pick([.unsigned, .forged])) : .signed
        switch random.int(0...99) {
        case 0..<8:
            return .brokerOutage(
                broker: random.pick(brokers),
                seconds: duration(1, 45),
                keepStore: brokerPersistence ? random.chance(0.8) : random.chance(0.3)
            )
        case 8..<14: return .dropConnection(device: device)
        case 14..<20: return .kill(device: device, downSeconds: duration(0.5, 30))
        case 20..<24: return .terminate(device: device, downSeconds: duration(0.5, 10))
        case 24..<29:
            return .powerCut(
                device: device,
                downSeconds: duration(1, 30),
                keepFraction: random.pick([0, 0.5, 1])
            )
        case 29..<33: return .diskFull(device: device, seconds: duration(2, 60))
        case 33..<36: return .clockStep(seconds: random.pick([-3600, -30, 2, 45, 86400]))
        case 36..<38: return .clockUnsynchronized(device: device, seconds: duration(5, 60))
        case 38..<42: return .slowConsumer(device: device, seconds: duration(2, 30))
        case 42..<64:
            let valid = random.chance(0.8)
            return .desired(
                layer: drawLayer(&random),
                settings: valid ? drawSettings(&random) : drawInvalidSettings(&random),
                valid: valid && signing == .signed,
                signing: signing
            )
        case 64..<68: return .clear(layer: drawLayer(&random), signing: signing)
        case 68..<71: return .replayOldDesired(layer: drawLayer(&random))
        case 71..<94:
            return .command(target: drawTarget(&random), members: drawCommand(&random), signing: signing)
        default:
            return .flood(target: drawTarget(&random), count: random.pick([30, 100, 400]), signing: signing)
        }
    }

    private func drawLayer(_ random: inout SimulationRandom) -> Layer {
        switch random.int(0...2) {
        case 0: return .fleet
        case 1: return .group("g1")
        default: return .device(random.pick(devices))
        }
    }

    private func drawTarget(_ random: inout SimulationRandom) -> Target {
        switch random.int(0...3) {
        case 0: return .fleet
        case 1: return .group("g1")
        default: return .device(random.pick(devices))
        }
    }

    /// One to three settings a desired document may carry, always valid together.
    private func drawSettings(_ random: inout SimulationRandom) -> String {
        var streams: [String: [String]] = [:]
        var metrics: String?
        for _ in 0..<random.int(1...3) {
            let stream = random.pick(streamNames)
            switch random.int(0...6) {
            case 0, 1: streams[stream, default: []].append("\"rate_hz\": \(random.pick([1, 2, 5, 10]))")
            case 2: streams[stream, default: []].append("\"enabled\": \(random.chance(0.7))")
            case 3:
                streams[stream, default: []].append(
                    random.chance(0.5) ? "\"qos\": 1" : "\"qos\": 0, \"durable\": false"
                )
            case 4:
                streams[stream, default: []].append(
                    random.chance(0.6) ? "\"qos\": 1, \"durable\": true" : "\"durable\": false"
                )
            case 5: streams[stream, default: []].append("\"batch\": \(random.pick([1, 2, 5]))")
            default: metrics = "\"interval_s\": \(random.pick([0, 10, 30]))"
            }
        }
        var parts: [String] = []
        if !streams.isEmpty {
            let body = streams.keys.sorted().map { name -> String in
                // A later draw of the same key wins, as in a JSON object written by hand: keep one of each.
                var seen = Set<String>()
                let members = streams[name]!.reversed().flatMap { $0.components(separatedBy: ", ") }.filter {
                    seen.insert(String($0.split(separator: ":")[0])).inserted
                }
                return "\"\(name)\": {\(members.reversed().joined(separator: ", "))}"
            }.joined(separator: ", ")
            parts.append("\"streams\": {\(body)}")
        }
        if let metrics { parts.append("\"metrics\": {\(metrics)}") }
        return parts.joined(separator: ", ")
    }

    private func drawInvalidSettings(_ random: inout SimulationRandom) -> String {
        random.pick([
            "\"streams\": {\"accelerometer\": {\"rate_hz\": 5000}}",
            "\"streams\": {\"gyroscope\": {\"qos\": 7}}",
            "\"streams\": {\"accelerometer\": {\"colour\": \"red\"}}",
            "\"mqtt\": {\"host\": \"elsewhere\"}",
            "\"streams\": {\"accelerometer\": {\"qos\": 0, \"durable\": true}}",
        ])
    }

    /// A command's members after its id.
    private func drawCommand(_ random: inout SimulationRandom) -> String {
        let stream = random.pick(streamNames)
        switch random.int(0...9) {
        case 0, 1:
            return "\"command\": \"set-rate\", \"stream\": \"\(stream)\", \"rate_hz\": \(random.pick([1, 2, 5, 10]))"
        case 2: return "\"command\": \"set-qos\", \"stream\": \"\(stream)\", \"qos\": \(random.int(0...1))"
        case 3: return "\"command\": \"\(random.chance(0.7) ? "start" : "stop")\", \"stream\": \"\(stream)\""
        case 4: return "\"command\": \"status\""
        case 5: return "\"command\": \"ping\""
        case 6: return "\"command\": \"set-batch\", \"stream\": \"\(stream)\", \"batch\": \(random.pick([1, 2]))"
        case 7: return "\"command\": \"warp\""
        case 8: return "\"command\": \"set-rate\", \"stream\": \"\(stream)\", \"rate_hz\": 0"
        default: return "\"command\": \"list-streams\""
        }
    }
}
