/// How a batch of samples is encoded on the wire (docs/payloads.md).
public enum StreamEncoding: String, Sendable, Equatable, CaseIterable, Codable {
    case json
    case binary
}
