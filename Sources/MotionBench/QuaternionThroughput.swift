import ArgumentParser
import Foundation
import MotionModel

/// Baseline: the cost of one quaternion rotation, the unit every estimator pays per sample.
struct QuaternionThroughput: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "quaternion", abstract: "ns per quaternion rotation.")

    @Option(help: "Iterations.") var iterations = 10_000_000

    func run() {
        var q = Quaternion(axis: Vector3(0.3, -0.2, 0.9), angle: 0.01)
        var v = Vector3(1, 0, 0)
        let start = DispatchTime.now().uptimeNanoseconds
        for _ in 0..<iterations {
            v = q.rotate(v)
            q.w += 1e-18
        }
        let ns = Double(DispatchTime.now().uptimeNanoseconds - start) / Double(iterations)
        print(String(format: "quaternion rotate: %.2f ns (checksum %.3f)", ns, v.x))
    }
}
