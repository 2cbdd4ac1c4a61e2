#if canImport(Glibc)
import Glibc
#endif

/// A progress line on stderr (unbuffered), so a long run shows where it is.
func progress(_ line: String) {
    let text = line + "\n"
    _ = text.withCString { write(2, $0, strlen($0)) }
}
