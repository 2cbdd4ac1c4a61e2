import MotionModel

/// Water submersion like Core Motion's `CMWaterSubmersionManager`: depth from the pressure above the
/// surface pressure, a state with hysteresis, and state-change events.
///
/// Depth = (p − p_surface) / (ρ · g). The surface pressure follows the air pressure (slowly, so weather and
/// walking uphill are tracked but a dive is not) only while the device is not submerged. States are chosen by
/// depth against thresholds; moving to a deeper state needs the threshold, moving back needs the threshold
/// minus `hysteresis`, so a diver hovering at a boundary does not flip the state with every wave.
package struct SubmersionEstimator: Sendable {
    package struct Settings: Sendable, Equatable {
        /// Fresh water at 25 °C, kg/m³.
        package static let freshWaterDensity = 997.0
        /// Sea water (35 g/kg salinity, about 15 °C), kg/m³.
        package static let saltWaterDensity = 1025.0

        /// Density of the water, kg/m³.
        package var waterDensity: Double
        /// Depth at which the device counts as submerged, m.
        package var submergedDepth: Double
        /// Depth from which it is `submergedDeep`, m.
        package var deepDepth: Double
        /// The deepest the device is rated for, m: beyond it the state is `pastMaxDepth`.
        package var maximumDepth: Double
        /// How far above the maximum depth `approachingMaxDepth` begins, m.
        package var approachingMargin: Double
        /// How far back above a threshold the depth must come before the state moves back, m.
        package var hysteresis: Double
        /// Time constant of the surface-pressure tracking while not submerged, s.
        package var surfaceTimeConstant: Double

        package init(
            waterDensity: Double,
            submergedDepth: Double,
            deepDepth: Double,
            maximumDepth: Double,
            approachingMargin: Double,
            hysteresis: Double,
            surfaceTimeConstant: Double
        ) {
            self.waterDensity = waterDensity
            self.submergedDepth = submergedDepth
            self.deepDepth = deepDepth
            self.maximumDepth = maximumDepth
            self.approachingMargin = approachingMargin
            self.hysteresis = hysteresis
            self.surfaceTimeConstant = surfaceTimeConstant
        }

        /// Fresh water; a 6 m rating (Apple Watch's depth gauge outside the Ultra); submerged from 0.3 m,
        /// deep from 1 m (Core Motion does not publish its thresholds, so these are configurable).
        package static let defaults = Settings(
            waterDensity: freshWaterDensity,
            submergedDepth: 0.3,
            deepDepth: 1.0,
            maximumDepth: 6.0,
            approachingMargin: 1.0,
            hysteresis: 0.1,
            surfaceTimeConstant: 10
        )
    }

    package let settings: Settings
    /// The current state; `notSubmerged` before the first pressure sample.
    package private(set) var state = SubmersionData.State.notSubmerged
    /// When the current state began, s.
    package private(set) var stateStart: Double?
    /// The surface (air) pressure, kPa; nil before the first pressure sample.
    package private(set) var surfacePressureKPa: Double?
    private var temperatureC: Double?
    private var lastTimestamp = 0.0

    package init(settings: Settings = .defaults) {
        self.settings = settings
    }

    /// Depth below the surface for a pressure, m (negative above the surface).
    package func depth(pressureKPa: Double, surfacePressureKPa: Double) -> Double {
        (pressureKPa - surfacePressureKPa) * 1000 / (settings.waterDensity * standardGravity)
    }

    /// Feeds one sample; returns the measurement when it carried a pressure, with an event when the state
    /// changed.
    package mutating func update(_ sample: IMUSample) -> (measurement: SubmersionData, event: SubmersionData.Event?)? {
        if let t = sample.temperatureC, t.isFinite { temperatureC = t }
        guard let p = sample.pressureKPa, p.isFinite, p > 0 else { return nil }
        let surface: Double
        if let s = surfacePressureKPa {
            surface = s
        } else {
            surface = p
            stateStart = sample.timestamp
        }
        let dt = max(sample.timestamp - lastTimestamp, 0)
        lastTimestamp = sample.timestamp
        let d = depth(pressureKPa: p, surfacePressureKPa: surface)
        let next = nextState(depth: d)
        var event: SubmersionData.Event?
        if next != state {
            state = next
            stateStart = sample.timestamp
            event = SubmersionData.Event(date: sample.timestamp, state: next)
        }
        if state == .notSubmerged {
            // Follow the air pressure, but never with a reading that is already below the surface.
            let alpha = surfacePressureKPa == nil ? 1 : dt / (settings.surfaceTimeConstant + dt)
            surfacePressureKPa = surface + alpha * (p - surface)
        } else {
            surfacePressureKPa = surface
        }
        let measurement = SubmersionData(
            timestamp: sample.timestamp,
            state: state,
            depth: state == .notSubmerged ? 0 : max(d, 0),
            pressureKPa: p,
            surfacePressureKPa: surfacePressureKPa ?? surface,
            temperatureC: temperatureC
        )
        return (measurement, event)
    }

    /// The state's rank from depth alone, with the thresholds lowered by `lowered` m.
    private func rank(depth d: Double, lowered: Double) -> Int {
        let s = settings
        if d > s.maximumDepth - lowered { return 4 }
        if d >= s.maximumDepth - s.approachingMargin - lowered { return 3 }
        if d >= s.deepDepth - lowered { return 2 }
        if d >= s.submergedDepth - lowered { return 1 }
        return 0
    }

    private func nextState(depth d: Double) -> SubmersionData.State {
        let current = Self.rank(of: state)
        let up = rank(depth: d, lowered: 0)
        if up > current { return Self.states[up] }
        let down = rank(depth: d, lowered: settings.hysteresis)
        return down < current ? Self.states[down] : state
    }

    private static let states: [SubmersionData.State] = [
        .notSubmerged, .submergedShallow, .submergedDeep, .approachingMaxDepth, .pastMaxDepth,
    ]

    private static func rank(of state: SubmersionData.State) -> Int {
        switch state {
        case .notSubmerged: 0
        case .submergedShallow: 1
        case .submergedDeep: 2
        case .approachingMaxDepth: 3
        case .pastMaxDepth: 4
        }
    }
}
