import MotionModel

/// A scenario as a looping list of segments, with transitions inserted wherever the phone changes
/// placement, and the bookkeeping that makes the world state continuous across segments and loops:
/// each segment continues from the heading, ground level and counters where the previous one ended.
struct MotionScript: Sendable {
    private(set) var segments: [MotionSegment]
    /// Loop length, s; `.infinity` for a single endless segment.
    let period: Double
    /// What one loop adds to the heading (rad), ground (m) and counters.
    private let loopHeading: Double
    private let loopGround: Double
    private let loopSteps: Int
    private let loopDistance: Double
    private let loopFloorsAscended: Int
    private let loopFloorsDescended: Int

    init(scenario: SimulationScenario, options: SimulationOptions, seed: UInt64) {
        var random = RandomSource(seed: seed, stream: 0x5C3E)
        let initialHeading = options.initialHeading ?? random.uniform(0, 2 * .pi)
        let tremor = (
            random.uniform(0, 2 * .pi), random.uniform(0, 2 * .pi), random.uniform(0, 2 * .pi),
            random.uniform(0, 2 * .pi)
        )
        func still(_ placement: Placement, _ seconds: Double, _ scenario: SimulationScenario) -> MotionSegment {
            MotionSegment(
                .still(StillMotion(placement: placement, activity: .stationary, duration: seconds, phases: tremor)),
                scenario: scenario
            )
        }
        func walk(_ seconds: Double, _ scenario: SimulationScenario = .walking) -> MotionSegment {
            MotionSegment(.gait(.walking(cadence: options.walkingCadenceHz, duration: seconds)), scenario: scenario)
        }
        func stairs(_ floors: Int, up: Bool) -> MotionSegment {
            MotionSegment(.gait(.stairs(floors: floors, up: up)), scenario: up ? .stairsUp : .stairsDown)
        }
        func lift(_ height: Double, _ scenario: SimulationScenario) -> MotionSegment {
            MotionSegment(.still(.lift(height: height, phases: tremor)), scenario: scenario)
        }
        func run(_ seconds: Double) -> MotionSegment {
            MotionSegment(.gait(.running(cadence: options.runningCadenceHz, duration: seconds)), scenario: .running)
        }
        func ride(_ random: inout RandomSource) -> MotionSegment {
            MotionSegment(
                .vehicle(VehicleMotion(kind: .bicycle, pedalHz: options.pedallingHz, random: &random)),
                scenario: .cycling
            )
        }
        func drive(_ random: inout RandomSource) -> MotionSegment {
            MotionSegment(
                .vehicle(VehicleMotion(kind: .car, pedalHz: options.pedallingHz, random: &random)),
                scenario: .driving
            )
        }
        let floors = max(1, options.floorsPerClimb)
        let climb = Double(floors) * GaitMotion.floorHeight

        let parts: [MotionSegment]
        switch scenario {
        case .stationary:
            parts = [still(.table, .infinity, .stationary)]
        case .walking:
            parts = [walk(.infinity)]
        case .running:
            parts = [run(.infinity)]
        case .stairsUp:
            parts = [
                stairs(floors, up: true), still(.hand, 8, .stairsUp), lift(-climb, .stairsUp),
                still(.hand, 6, .stairsUp),
            ]
        case .stairsDown:
            parts = [
                stairs(floors, up: false), still(.hand, 8, .stairsDown), lift(climb, .stairsDown),
                still(.hand, 6, .stairsDown),
            ]
        case .rotating:
            parts = [MotionSegment(.rotation(RotationMotion()), scenario: .rotating)]
        case .cycling:
            parts = [ride(&random)]
        case .driving:
            parts = [drive(&random)]
        case .mixedDay:
            parts = [
                still(.table, 30, .stationary),
                walk(60),
                stairs(2, up: true),
                walk(20),
                stairs(2, up: false),
                still(.hand, 10, .stationary),
                run(60),
                still(.pocket, 10, .stationary),
                ride(&random),
                walk(30),
                drive(&random),
                walk(30),
            ]
        }

        var segments: [MotionSegment] = []
        var time = 0.0
        var heading = initialHeading
        var ground = 0.0
        var steps = 0
        var distance = 0.0
        var up = 0
        var down = 0
        let loops = parts.count > 1 || parts[0].duration.isFinite
        for i in parts.indices {
            var segment = parts[i]
            segment.start = time
            segment.heading = heading
            segment.ground = ground
            segment.steps = steps
            segment.distance = distance
            segment.floorsAscended = up
            segment.floorsDescended = down
            segments.append(segment)
            guard segment.duration.isFinite else { break }
            time += segment.duration

            let end = segment.evaluate(at: segment.duration)
            let nextHeading = heading + end.heading
            let nextGround = ground + end.ground
            steps += end.steps
            distance += end.distance
            up += end.floorsAscended
            down += end.floorsDescended

            let next = parts[(i + 1) % parts.count]
            if loops, next.placement != segment.placement {
                let start = next.evaluate(at: 0)
                let fromAttitude = Quaternion(axis: Placement.up, angle: heading - nextHeading) * end.frame.attitude
                let motion = TransitionMotion(
                    fromAttitude: fromAttitude.normalized,
                    toAttitude: start.frame.attitude,
                    fromAltitude: end.frame.altitude + ground - nextGround,
                    toAltitude: start.frame.altitude,
                    duration: TransitionMotion.standardDuration
                )
                var transition = MotionSegment(.transition(motion), scenario: next.scenario)
                transition.start = time
                transition.heading = nextHeading
                transition.ground = nextGround
                transition.steps = steps
                transition.distance = distance
                transition.floorsAscended = up
                transition.floorsDescended = down
                segments.append(transition)
                time += transition.duration
            }
            heading = nextHeading
            ground = nextGround
        }
        self.segments = segments
        period = loops ? time : .infinity
        loopHeading = heading - initialHeading
        loopGround = ground
        loopSteps = steps
        loopDistance = distance
        loopFloorsAscended = up
        loopFloorsDescended = down
    }

    /// The world state at time `t` (s). `cursor` remembers the segment of the previous call, so a
    /// forward-moving time finds its segment in O(1).
    func evaluate(at t: Double, cursor: inout Int) -> WorldMotion {
        var loop = 0.0
        var tau = max(0, t)
        if period.isFinite {
            loop = (tau / period).rounded(.down)
            tau -= loop * period
        }
        if cursor >= segments.count || cursor < 0 || tau < segments[cursor].start { cursor = 0 }
        while cursor + 1 < segments.count, tau >= segments[cursor + 1].start { cursor += 1 }
        let segment = segments[cursor]
        let local = segment.evaluate(at: tau - segment.start)

        let heading = segment.heading + loop * loopHeading
        let turn = Quaternion(axis: Placement.up, angle: heading)
        var frame = local.frame
        frame.attitude = (turn * frame.attitude).normalized
        frame.angularVelocity = turn.rotate(frame.angularVelocity)
        frame.angularAcceleration = turn.rotate(frame.angularAcceleration)
        frame.velocity = turn.rotate(frame.velocity)
        frame.acceleration = turn.rotate(frame.acceleration)
        frame.altitude += segment.ground + loop * loopGround

        let n = Int(loop)
        return WorldMotion(
            frame: frame,
            steps: segment.steps + n * loopSteps + local.steps,
            distance: segment.distance + loop * loopDistance + local.distance,
            floorsAscended: segment.floorsAscended + n * loopFloorsAscended + local.floorsAscended,
            floorsDescended: segment.floorsDescended + n * loopFloorsDescended + local.floorsDescended,
            cadence: local.cadence,
            speed: local.speed,
            activity: local.activity,
            scenario: segment.scenario,
            isTransition: local.isTransition
        )
    }
}
