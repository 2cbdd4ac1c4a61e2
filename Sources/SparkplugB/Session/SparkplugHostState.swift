import Foundation

/// A primary host application's STATE message (Sparkplug 3.0, 4.2.3): retained JSON on `spBv1.0/STATE/<host>`,
/// `{"online": true|false, "timestamp": <ms since the epoch, UTC>}`. Hostile input: at most 1 KiB, a JSON object
/// with a boolean `online` and a non-negative integral `timestamp`; anything else is refused with the reason.
package struct SparkplugHostState: Sendable, Equatable {
    package static let maximumPayloadBytes = 1024

    package var online: Bool
    package var timestampMs: UInt64

    package init(online: Bool, timestampMs: UInt64) {
        self.online = online
        self.timestampMs = timestampMs
    }

    /// The message a host publishes: `{"online":…,"timestamp":…}` (what `init(parsing:)` reads back).
    package var payload: [UInt8] { Array(#"{"online":\#(online),"timestamp":\#(timestampMs)}"#.utf8) }

    package init(parsing payload: [UInt8]) throws(SparkplugError) {
        guard payload.count <= Self.maximumPayloadBytes else {
            throw SparkplugError(
                .malformedPayload,
                "a STATE payload of \(payload.count) bytes is too large (at most \(Self.maximumPayloadBytes))"
            )
        }
        let wire: Wire
        do {
            wire = try JSONDecoder().decode(Wire.self, from: Data(payload))
        } catch {
            throw SparkplugError(
                .malformedPayload,
                "the STATE payload is not {\"online\": true|false, \"timestamp\": <ms>} (Sparkplug 3.0; the plain "
                    + "ONLINE/OFFLINE of 2.2 hosts is not followed)"
            )
        }
        self.init(online: wire.online, timestampMs: wire.timestamp)
    }

    /// JSONDecoder keeps booleans and numbers apart, so `"online": 1` and `"timestamp": true` are refused.
    private struct Wire: Decodable {
        var online: Bool
        var timestamp: UInt64

        enum CodingKeys: String, CodingKey {
            case online
            case timestamp
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            online = try container.decode(Bool.self, forKey: .online)
            if let whole = try? container.decode(UInt64.self, forKey: .timestamp) {
                timestamp = whole
            } else {
                // Some hosts write the milliseconds as a double (1.7e12): accept it when it is whole.
                let value = try container.decode(Double.self, forKey: .timestamp)
                guard value.isFinite, value >= 0, value < 1.8e19, value == value.rounded(.towardZero) else {
                    throw DecodingError.dataCorruptedError(
                        forKey: .timestamp,
                        in: container,
                        debugDescription: "not a whole number of milliseconds"
                    )
                }
                timestamp = UInt64(value)
            }
        }
    }
}
