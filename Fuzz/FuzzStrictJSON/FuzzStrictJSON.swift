import CFuzzerDriver
import MotionWire

// The one parser of JSON from the network (StrictJSON): commands, signed envelopes, desired documents, and what the
// operators' tools read back. Byte 0 chooses the limits (a command's, a desired document's, a tool's, or tight
// ones the fuzzer can reach: depth 3, 4 members, 16-byte strings, 12 values); the rest is the document.
//
// Checked: a parsed value keeps within its limits (depth, members, string bytes, values); it writes back
// (`encoded()`, what operators' tools sign) as JSON that parses to the same value, and writing that again gives
// the same bytes; every string of it, through `Printable`, holds no control character a terminal would act on.
let tight = StrictJSON.Limits(
    maximumBytes: 4096,
    maximumDepth: 3,
    maximumMembers: 4,
    maximumStringBytes: 16,
    maximumValues: 12
)
let choices: [StrictJSON.Limits] = [.command, .desiredDocument, .document, tight]

struct Census {
    var depth = 0
    var values = 0
    var members = 0
    var stringBytes = 0
}

func survey(_ value: StrictJSON.Value, depth: Int, into census: inout Census) {
    census.values += 1
    switch value {
    case .string(let text):
        census.stringBytes = max(census.stringBytes, text.utf8.count)
        checkPrintable(text)
    case .array(let elements):
        census.depth = max(census.depth, depth)
        census.members = max(census.members, elements.count)
        for element in elements { survey(element, depth: depth + 1, into: &census) }
    case .object(let members):
        census.depth = max(census.depth, depth)
        census.members = max(census.members, members.count)
        var keys = Set<String>()
        for member in members {
            precondition(keys.insert(member.key).inserted, "a repeated key was accepted: \(member.key)")
            census.stringBytes = max(census.stringBytes, member.key.utf8.count)
            checkPrintable(member.key)
            survey(member.value, depth: depth + 1, into: &census)
        }
    case .null, .bool, .number:
        break
    }
}

func checkPrintable(_ text: String) {
    for scalar in Printable.text(text, limit: 64).unicodeScalars {
        let v = scalar.value
        precondition(
            !(v < 0x20 || (0x7F...0x9F).contains(v) || (0x2028...0x202E).contains(v) || (0x2066...0x2069).contains(v)),
            "Printable let U+\(String(v, radix: 16)) through"
        )
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzStrictJSON(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    guard count > 0 else { return 0 }
    let raw = UnsafeRawBufferPointer(start: start, count: count)
    let limits = choices[Int(raw[0]) % choices.count]
    let bytes = Array(raw[1...])
    let value: StrictJSON.Value
    do {
        value = try StrictJSON.parse(bytes, limits: limits)
    } catch {
        precondition(!error.reason.isEmpty && error.offset >= 0 && error.offset <= bytes.count, "\(error)")
        return 0
    }
    var census = Census()
    survey(value, depth: 1, into: &census)
    precondition(census.depth <= limits.maximumDepth, "depth \(census.depth) over \(limits.maximumDepth)")
    precondition(census.values <= limits.maximumValues, "\(census.values) values over \(limits.maximumValues)")
    precondition(census.members <= limits.maximumMembers, "\(census.members) members over \(limits.maximumMembers)")
    precondition(census.stringBytes <= limits.maximumStringBytes, "a \(census.stringBytes)-byte string")

    let written = value.encoded()
    let generous = StrictJSON.Limits(
        maximumBytes: 1 << 24,
        maximumDepth: 64,
        maximumMembers: 1 << 20,
        maximumStringBytes: 1 << 24,
        maximumValues: 1 << 22
    )
    guard let again = try? StrictJSON.parse(written, limits: generous), again == value else {
        fatalError("the value does not read back from its encoding: \(String(decoding: written, as: UTF8.self))")
    }
    precondition(again.encoded() == written, "writing the value twice gives different bytes")
    return 0
}

/// The entry point SwiftPM links as `main` (`<module>_main`): libFuzzer's driver, with the arguments libFuzzer
/// documents (`-max_total_time=`, corpus directories, …).
@_cdecl("FuzzStrictJSON_main")
public func fuzzerMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> CInt {
    var argc = argc
    var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = argv
    return LLVMFuzzerRunDriver(&argc, &argv) { data, size in
        fuzzStrictJSON(UnsafeRawPointer(data) ?? UnsafeRawPointer(bitPattern: 1)!, size)
    }
}
