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
