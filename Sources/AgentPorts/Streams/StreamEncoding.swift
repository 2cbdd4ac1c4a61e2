/// How a batch of samples is encoded on the wire (docs/payloads.md).
package enum StreamEncoding: String, Sendable, Equatable, CaseIterable, Codable {
    case json
    case binary
}
