import Foundation
import MotionWire

/// JSON for the page. Device text travels only inside JSON strings, encoded by JSONEncoder and then with
/// `Printable.json`'s escapes (DEL, C1, line separators, bidirectional overrides), so what reaches the page is
/// data that the page shows with `textContent` — never markup, never a control sequence in a log.
enum ConsoleJSON {
    /// A JSON string literal of `text`.
    static func string(_ text: String) -> String {
        guard let data = try? JSONEncoder().encode(text) else { return "\"\"" }
        return Printable.json(String(decoding: data, as: UTF8.self))
    }

    /// `value` as JSON text (keys sorted, so equal values give equal text).
    static func encode(_ value: some Encodable) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        guard let data = try? encoder.encode(value) else { return "null" }
        return Printable.json(String(decoding: data, as: UTF8.self))
    }
}
