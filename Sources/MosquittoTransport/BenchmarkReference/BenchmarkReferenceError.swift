/// Why a benchmark reference client could not connect, subscribe or publish; the text says what to check.
public struct BenchmarkReferenceError: Error, CustomStringConvertible {
    public var description: String
}
