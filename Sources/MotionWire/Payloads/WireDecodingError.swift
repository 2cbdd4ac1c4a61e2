/// Why a payload does not follow docs/payloads.md; the description names the field or byte at fault.
public struct WireDecodingError: Error, Sendable, Equatable, CustomStringConvertible {
    public var description: String

    public init(_ description: String) {
        self.description = description
    }
}
