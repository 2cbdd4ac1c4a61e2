/// Why a benchmark reference client could not connect, subscribe or publish; the text says what to check.
package struct BenchmarkReferenceError: Error, CustomStringConvertible {
    package var description: String
}
