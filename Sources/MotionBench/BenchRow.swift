#if canImport(Glibc)
import Glibc
#endif

/// A progress line on stderr (unbuffered), so a long run shows where it is.
func progress(_ line: String) {
    let text = line + "\n"
    _ = text.withCString { write(2, $0, strlen($0)) }
}

/// One line of a benchmark table: what was measured, its value, and the target when the issue sets one.
struct BenchRow: Sendable {
    var name: String
    var value: String
    var target: String = ""
    /// nil when there is no target.
    var met: Bool? = nil

    static func printTable(_ title: String, _ rows: [BenchRow]) {
        let width = max(44, (rows.map(\.name.count).max() ?? 0) + 2)
        let valueWidth = max(22, (rows.map(\.value.count).max() ?? 0) + 2)
        print(title)
        print(pad("measure", width) + pad("value", valueWidth) + "target")
        for row in rows {
            let verdict = row.met.map { $0 ? "  met" : "  NOT met" } ?? ""
            print(pad(row.name, width) + pad(row.value, valueWidth) + row.target + verdict)
        }
    }

    private static func pad(_ text: String, _ width: Int) -> String {
        text.count >= width ? text + " " : text + String(repeating: " ", count: width - text.count)
    }
}

enum Statistics {
    static func median(_ values: [Double]) -> Double {
        guard !values.isEmpty else { return .nan }
        let sorted = values.sorted()
        let mid = sorted.count / 2
        return sorted.count % 2 == 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2
    }

    /// Nearest-rank percentile of `sorted` (ascending), p in 0…100.
    static func percentile(_ sorted: [Double], _ p: Double) -> Double {
        guard !sorted.isEmpty else { return .nan }
        let rank = Int((p / 100 * Double(sorted.count)).rounded(.up))
        return sorted[min(max(rank, 1), sorted.count) - 1]
    }
}
