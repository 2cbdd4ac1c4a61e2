import AgentPorts
import Foundation
import MotionWire

/// The samples of one sample-stream message, decoded only as far as counting and continuity need: each
/// sample's `seq` and sensor `timestamp`. The three shapes of docs/payloads.md — a single JSON sample, a JSON
/// batch `{"batch": [sample, …]}` and the binary batch "MAB" (device motion in layout version 2) — are read by
/// MotionWire's strict decoder, the one `sub`, `watch` and the golden tests use, so a payload that drifts from the
/// documented layout counts as undecodable here.
struct BatchPayload {
    struct Sample: Sendable, Hashable {
        var seq: UInt64
        /// Sensor clock, s.
        var timestamp: Double
    }

    struct DecodeError: Error, CustomStringConvertible {
        var description: String
    }

    enum Encoding: String, Sendable {
        case json
        case binary
    }

    var encoding: Encoding
    var samples: [Sample]

    /// - Parameter kind: the binary `kind` the stream must carry (1 accelerometer … 4 device-motion).
    init(decoding bytes: [UInt8], kind: UInt8) throws {
        guard !bytes.isEmpty else { throw DecodeError(description: "empty payload") }
        guard let binaryKind = BinaryBatchLayout.Kind(rawValue: kind),
            let payloadKind = PayloadKind.allCases.first(where: { $0.binaryKind == binaryKind })
        else { throw DecodeError(description: "no record layout for kind \(kind)") }
        encoding = BinaryBatchReader.isBinary(bytes) ? .binary : .json
        do {
            samples = try PayloadDecoder.decode(bytes, kind: payloadKind).map {
                Sample(seq: $0.envelope.seq, timestamp: $0.envelope.timestamp)
            }
        } catch {
            throw DecodeError(description: error.description)
        }
    }
}
