import Foundation

/// What the benchmarks read in the agent's log: the sensor device plans it chose and anything it complained
/// about.
enum AgentLog {
    /// Log lines at notice level or above, and plan changes after the start (each reconfigures the streams
    /// and so sends partial batches).
    static func problems(_ log: String) -> [String] {
        let lines = log.split(separator: "\n").map(String.init)
        var problems = lines.filter { line in
            ["notice", "warning", "error", "critical"].contains(line.split(separator: " ").dropFirst().first ?? "")
        }
        let plans = lines.filter { $0.contains("sensor device on at ") }.count
        if plans > 1 { problems.append("\(plans - 1) plan changes after the start (\"sensor device on at\" lines)") }
        return problems
    }

    /// The device rate from the agent's last "sensor device on at … Hz" log line.
    static func deviceRateHz(_ log: String) -> Double? {
        guard let line = log.split(separator: "\n").last(where: { $0.contains("sensor device on at ") }),
            let on = line.range(of: "on at "),
            let hz = line[on.upperBound...].range(of: " Hz")
        else { return nil }
        return Double(line[on.upperBound..<hz.lowerBound])
    }

    /// The last plan of each device, e.g. "on at 1000.0 Hz", prefixed by the device when there are several
    /// ("iio.device=iio:device0 … sensor device on at 1000.0 Hz"); "?" when none was logged.
    static func devicePlans(_ log: String) -> String {
        var plans: [String: String] = [:]
        for line in log.split(separator: "\n") where line.contains("sensor device") && line.contains(" at ") {
            guard let range = line.range(of: "on at ") else { continue }
            let device = line.split(separator: " ").first { $0.hasPrefix("iio.device=") }.map { $0.dropFirst(11) } ?? ""
            plans[String(device)] = String(line[range.lowerBound...].prefix(24)).trimmingCharacters(in: .whitespaces)
        }
        guard !plans.isEmpty else { return "?" }
        return plans.sorted { $0.key < $1.key }.map { plans.count > 1 ? "\($0.key) \($0.value)" : $0.value }
            .joined(separator: ", ")
    }
}
