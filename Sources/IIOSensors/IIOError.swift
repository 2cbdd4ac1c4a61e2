/// A failure talking to libiio: the operation, the library's text and what to do about it.
package struct IIOError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What was being done, e.g. `open IIO context "ip:10.0.0.5"`.
    package var operation: String
    /// The (positive) errno code libiio returned, 0 when the problem is not an errno.
    package var code: Int32
    /// The library's text for `code`, or a sentence naming the problem.
    package var message: String
    /// What the user can do about it.
    package var fix: String

    package init(operation: String, code: Int32, message: String, fix: String) {
        self.operation = operation
        self.code = code
        self.message = message
        self.fix = fix
    }

    /// An error from a libiio call that returned `-code` (or set errno to `code`).
    init(operation: String, errno code: Int32, fix: String) {
        self.init(operation: operation, code: abs(code), message: IIOLibrary.describe(errno: code), fix: fix)
    }

    package var description: String {
        // libiio's iio_strerror already ends in "(code)".
        let reason = code == 0 || message.hasSuffix("(\(code))") ? message : "\(message) (\(code))"
        return fix.isEmpty ? "\(operation) failed: \(reason)" : "\(operation) failed: \(reason) — \(fix)"
    }
}
