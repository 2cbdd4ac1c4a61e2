import Foundation
import MotionModel
import Testing

@testable import MotionEstimation

/// Every device-motion output carries the uncertainty model's 1-σ values (docs/payloads.md).
@Suite struct DeviceMotionAccuracyTests {
    @Test(arguments: AttitudeReferenceFrame.allCases)
    func outputsCarryTheModelsSigmas(_ frame: AttitudeReferenceFrame) {
        var sim = AttitudeSynthesizer(attitude: DeviceMotionEstimatorTests.start, rateHz: 100)
        var e = DeviceMotionEstimator(referenceFrame: frame, sampleInterval: 0.01)
        var outputs = 0
        var last: DeviceMotion?
        for i in 0..<3000 {
            let rate = Vector3(0.2 * sin(Double(i) / 200), 0.15 * cos(Double(i) / 170), 0.4)
            guard let m = e.update(sim.step(rate: rate)) else { continue }
            outputs += 1
            last = m
            #expect(m.inclinationAccuracy == e.uncertainty.inclinationDegrees)
            if frame == .xArbitraryZVertical {
                #expect(m.headingAccuracy == -1)
            } else {
                #expect(m.headingAccuracy == e.uncertainty.headingDegrees)
            }
        }
        #expect(outputs > 2900)
        guard let last else { return }
        #expect(last.inclinationAccuracy > 0.1 && last.inclinationAccuracy < 5, "\(last.inclinationAccuracy)°")
        if frame != .xArbitraryZVertical {
            #expect(last.headingAccuracy > 0.1 && last.headingAccuracy < 5, "\(last.headingAccuracy)° after 30 s")
        }
    }
}
