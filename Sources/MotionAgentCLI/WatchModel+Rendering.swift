import Foundation

extension WatchModel {
    /// The eighth-block characters U+2581…U+2588, lowest to highest.
    static let blocks: [Character] = ["▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"]

    /// One block per value, scaled between the values' minimum and maximum (all lowest when they are equal).
    static func sparkline(_ values: [Double]) -> String {
        guard let low = values.min(), let high = values.max() else { return "" }
        let span = high - low
        return String(
            values.map { value in
                guard span > 0 else { return blocks[0] }
                let index = Int(((value - low) / span * Double(blocks.count - 1)).rounded())
                return blocks[min(max(index, 0), blocks.count - 1)]
            }
        )
    }

    /// The frame's lines, without escapes; `width` truncates long lines.
    func render(now: Double, width: Int) -> [String] {
        var lines: [String] = []
        var header = "motion-agent watch  \(root)  \(state)"
        if let bootCount { header += "  boot \(bootCount)" }
        if let agentVersion { header += "  agent \(agentVersion)" }
        lines.append(header)
        lines.append(metrics.isEmpty ? "metrics: none yet (metrics.interval_s)" : "metrics: " + metrics)
        lines.append("")
        lines.append(pad("stream", 20) + pad("rate/s", 9, right: true) + pad("msgs", 9, right: true) + "  latest")
        for name in streams.keys.sorted() {
            let stream = streams[name]!
            lines.append(
                pad(name, 20) + pad(String(format: "%.1f", rate(of: stream, now: now)), 9, right: true)
                    + pad(String(stream.messages), 9, right: true) + "  " + stream.summary
            )
        }
        if streams.isEmpty { lines.append("(no stream messages yet)") }
        lines.append("")
        func row(_ label: String, _ history: [Double], unit: String) {
            guard let last = history.last, let low = history.min(), let high = history.max() else {
                lines.append(pad(label, 12) + "–")
                return
            }
            lines.append(
                pad(label, 12) + Self.sparkline(history)
                    + String(format: "  %.3f %@ (%.3f…%.3f)", last, unit, low, high)
            )
        }
        row("|accel|", magnitudeHistory, unit: "g")
        row("roll", rollHistory, unit: "°")
        row("pitch", pitchHistory, unit: "°")
        row("yaw", yawHistory, unit: "°")
        return lines.map { $0.count > width ? String($0.prefix(width)) : $0 }
    }

    private func pad(_ text: String, _ width: Int, right: Bool = false) -> String {
        guard text.count < width else { return text + " " }
        let fill = String(repeating: " ", count: width - text.count)
        return right ? fill + text : text + fill
    }
}
