import Foundation
import MotionModel
import MotionWire
import Testing

/// `StatusJSON` writes the retained status and the configuration account in place of `JSONEncoder`: what it
/// writes must read back, through `JSONDecoder`, to the value it was given, every optional present or absent.
@Suite struct StatusJSONTests {
    static let hostile = "q\"uote b\\ack s/lash \n\r\t\u{0}\u{1F}\u{7F} é 温度 🚀 \u{2028}"

    static func setting(_ text: String, note: Bool) -> ConfigurationStatus.Setting {
        ConfigurationStatus.Setting(value: "100\(text)", source: "command 7f1c2a at \(text)", note: note ? text : nil)
    }

    static func configuration(_ text: String, full: Bool) -> ConfigurationStatus {
        var account = ConfigurationStatus(
            groups: full ? ["lab", text] : [],
            desired: full ? ["fleet": 12, "group \(text)": -3, "device": Int.max] : [:],
            refused: full ? .init(layer: "device", version: 7, reason: text, time: 1_764_651_234.123_456) : nil,
            ignored: full ? .init(layer: text, reason: "older", time: 0.1) : nil,
            settings: [
                "streams.accelerometer.rate_hz": setting(text, note: full),
                "streams.\(text).qos": setting("", note: false),
            ]
        )
        if full {
            account.device = text
            account.bootCount = UInt64.max
            account.time = 1e-05
        }
        return account
    }

    static func status(_ text: String, full: Bool) -> AgentStatus {
        var outbox = OutboxStatus(
            enqueued: 10,
            published: 9,
            droppedOverflow: 1,
            droppedExpired: full ? 2 : nil,
            rejected: 0,
            failed: UInt64.max,
            depth: 3,
            bytes: 4096
        )
        if full {
            outbox.durableAppended = 1
            outbox.durablePublished = 2
            outbox.durableAcknowledged = 3
            outbox.durableDropped = 4
            outbox.durableRejected = 5
            outbox.durableDepth = 6
            outbox.durableBacklog = 7
            outbox.durableBytes = 8
            outbox.durableSegments = 9
            outbox.durableDroppedNoSpace = 10
            outbox.durableExpired = 11
            outbox.durableStorageProblem = text
        }
        let stream = AgentStatus.Stream(
            enabled: true,
            requestedRateHz: 200,
            rateHz: 99.999_999_9,
            qos: 1,
            retain: false,
            available: full,
            error: full ? text : nil,
            referenceFrame: full ? "xMagneticNorthZVertical" : nil,
            batch: 10,
            encoding: text,
            referenceAttitude: full
                ? .init(quaternion: Quaternion(w: 0.707_106_781_186_547_5, x: -0.0, y: 1e-300, z: -0.5), time: 1.5e20)
                : nil
        )
        return AgentStatus(
            state: full ? .online : .offline,
            device: text,
            agentVersion: AgentVersion.version,
            schemaVersion: AgentVersion.schemaVersion,
            bootCount: full ? UInt64.max : 0,
            time: 1_764_651_234.567_891,
            clockSynchronized: full ? false : nil,
            reason: full ? text : nil,
            source: full ? "config.yaml" : nil,
            streams: full ? ["accelerometer": stream, text: stream, "device-motion": stream] : nil,
            devices: full
                ? [
                    .init(
                        id: "iio:device0",
                        name: text,
                        sensors: ["accelerometer", text],
                        activeSensors: [],
                        rateHz: 0,
                        supportedRatesHz: "12.5 25 50 100",
                        error: text
                    ),
                    .init(id: "", name: "", sensors: [], activeSensors: [], rateHz: 1.25, supportedRatesHz: ""),
                ]
                : nil,
            sensors: full ? .init(sensors: [.accelerometer, .gyroscope, .barometer], locationConfigured: true) : nil,
            outbox: full ? outbox : nil,
            configuration: full
                ? ConfigurationSummary(configuration(text, full: true))
                : ConfigurationSummary(groups: [], desired: [:]),
            broker: full ? .init(server: "[::1]:1883", protocol: "v5", failovers: 2) : nil
        )
    }

    static let texts = ["plain", hostile, ""]

    @Test(arguments: texts, [true, false])
    func statusReadsBackEqual(text: String, full: Bool) throws {
        let status = Self.status(text, full: full)
        let bytes = try StatusJSON.encode(status)
        let decoded = try JSONDecoder().decode(AgentStatus.self, from: Data(bytes))
        #expect(decoded == status, "\(String(decoding: bytes, as: UTF8.self))")
    }

    @Test(arguments: texts, [true, false])
    func configurationReadsBackEqual(text: String, full: Bool) throws {
        let account = Self.configuration(text, full: full)
        let bytes = try StatusJSON.encode(account)
        let decoded = try JSONDecoder().decode(ConfigurationStatus.self, from: Data(bytes))
        #expect(decoded == account, "\(String(decoding: bytes, as: UTF8.self))")
    }

    /// Where no string needs an escape both spell alike, it is byte for byte what `JSONEncoder` with sorted
    /// keys wrote before: the same keys, in the same order, the same numbers.
    @Test(arguments: [true, false])
    func writesWhatJSONEncoderWrote(full: Bool) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let status = Self.status("plain", full: full)
        #expect(
            String(decoding: try StatusJSON.encode(status), as: UTF8.self)
                == String(decoding: try encoder.encode(status), as: UTF8.self)
        )
        let account = Self.configuration("plain", full: full)
        #expect(
            String(decoding: try StatusJSON.encode(account), as: UTF8.self)
                == String(decoding: try encoder.encode(account), as: UTF8.self)
        )
    }

    @Test func refusesWhatJSONCannotCarry() {
        var status = Self.status("plain", full: false)
        status.time = .nan
        #expect(throws: StatusJSON.NonFiniteNumber.self) { try StatusJSON.encode(status) }
    }
}
