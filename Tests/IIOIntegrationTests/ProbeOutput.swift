import MotionModel
import TestSupport

/// A sample line of IIOProbe's output.
struct ProbeSample {
    var timestamp: Double
    var acceleration: Vector3?
    var rotationRate: Vector3?
    var magneticField: Vector3?
    var pressureKPa: Double?
    var temperatureC: Double?
    /// Position in the output, to tell what came before or after a fault line.
    var line: Int
}

struct ProbeOutput {
    var samples: [ProbeSample] = []
    var faults: [(device: String, recovered: Bool, message: String, line: Int)] = []
    var status: [String: [String: String]] = [:]
    var files: [String: String] = [:]
    var replanLine: Int?

    init(_ result: FakeIIOResult) {
        for (n, raw) in result.stdout.split(separator: "\n").enumerated() {
            let f = raw.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            switch f.first {
            case "sample":
                var s = ProbeSample(timestamp: Double(f[1]) ?? .nan, line: n)
                for field in f.dropFirst(2) {
                    let kv = field.split(separator: "=", maxSplits: 1).map(String.init)
                    let numbers = kv[1].split(separator: ",").compactMap { Double($0) }
                    switch kv[0] {
                    case "acc": s.acceleration = Vector3(numbers[0], numbers[1], numbers[2])
                    case "gyro": s.rotationRate = Vector3(numbers[0], numbers[1], numbers[2])
                    case "mag": s.magneticField = Vector3(numbers[0], numbers[1], numbers[2])
                    case "p": s.pressureKPa = numbers[0]
                    case "t": s.temperatureC = numbers[0]
                    default: break
                    }
                }
                samples.append(s)
            case "fault":
                faults.append((f[1], f[2] == "recovered=1", f[3], n))
            case "status":
                var map: [String: String] = [:]
                for field in f.dropFirst(2) {
                    let kv = field.split(separator: "=", maxSplits: 1).map(String.init)
                    if kv.count == 2 { map[kv[0]] = kv[1] }
                }
                status[f[1]] = map
            case "file":
                files[f[1]] = f.count > 2 ? f[2] : ""
            case "replan":
                replanLine = n
            default:
                break
            }
        }
    }
}

/// Tolerance for "exact" values: the chain is a handful of double operations, so results agree to the last
/// bits; 1e-12 relative leaves room for a different but equivalent order of operations.
func close(_ a: Double, _ b: Double) -> Bool {
    abs(a - b) <= 1e-12 * max(1, abs(a), abs(b))
}

func close(_ a: Vector3?, _ b: Vector3) -> Bool {
    guard let a else { return false }
    return close(a.x, b.x) && close(a.y, b.y) && close(a.z, b.z)
}
