import Foundation
import Harness

extension BatchedStreams {
    /// What one stream delivered in one window.
    struct StreamFigures: Sendable {
        var messages = 0
        var samples = 0
        var payloadBytes = 0
        /// The same messages as MQTT PUBLISH packets on the wire (TCP/IP headers not counted).
        var packetBytes = 0
        /// Places where a sample's `seq` did not follow the previous one by exactly 1.
        var seqGaps = 0
        /// `seq` values skipped over all gaps.
        var missingSamples = 0
        /// Consecutive samples more than 1.5 periods apart, or not increasing.
        var timestampGaps = 0
        var undecodable = 0
        var firstError: String?
        /// Per message, receipt − the timestamp of its oldest sample, ms: the batching delay plus the path.
        /// Only with the simulated input, whose timestamps are CLOCK_MONOTONIC at acquisition.
        var oldestSampleAgesMs: [Double] = []
        /// JSON samples carrying `"clockSynchronized":false` (the agent adds it while adjtimex reports the clock
        /// unsynchronized, checked once a second), which makes them that flag's 26 bytes longer.
        var unsynchronizedSamples = 0
        /// Messages with another sample count than the configured batch (the agent sends partial batches only
        /// when it reconfigures or stops), and the first one: its first seq and sample count.
        var partialBatches = 0
        var firstPartial: String?
    }

    static let unsynchronizedFlag = Array(",\"clockSynchronized\":false".utf8)

    /// Counts, sizes and continuity of one stream's messages (in arrival order).
    static func tally(
        _ messages: [CapturingSubscriber.Arrival],
        spec: StreamSpec,
        batch: Int,
        topicBytes: Int,
        qos: Int,
        monotonicTimestamps: Bool
    ) -> StreamFigures {
        var figures = StreamFigures()
        let period = 1 / spec.rateHz
        var previous: BatchPayload.Sample?
        for message in messages {
            figures.messages += 1
            figures.payloadBytes += message.payload.count
            figures.packetBytes += publishPacketBytes(
                topicBytes: topicBytes,
                payloadBytes: message.payload.count,
                qos: qos
            )
            let decoded: BatchPayload
            do {
                decoded = try BatchPayload(decoding: message.payload, kind: spec.kind)
            } catch {
                figures.undecodable += 1
                if figures.firstError == nil { figures.firstError = "\(error)" }
                previous = nil
                continue
            }
            figures.samples += decoded.samples.count
            if decoded.samples.count != batch {
                figures.partialBatches += 1
                if figures.firstPartial == nil {
                    let at = Double(message.receivedNanoseconds - (messages.first?.receivedNanoseconds ?? 0)) / 1e9
                    figures.firstPartial =
                        "\(decoded.samples.count) samples from seq \(decoded.samples.first?.seq ?? 0), "
                        + String(format: "%.1f s into the window", at)
                }
            }
            if decoded.encoding == .json {
                figures.unsynchronizedSamples += occurrences(of: unsynchronizedFlag, in: message.payload)
            }
            if monotonicTimestamps, let oldest = decoded.samples.first {
                figures.oldestSampleAgesMs.append(Double(message.receivedNanoseconds) / 1e6 - oldest.timestamp * 1e3)
            }
            for sample in decoded.samples {
                if let last = previous {
                    if sample.seq != last.seq + 1 {
                        figures.seqGaps += 1
                        if sample.seq > last.seq { figures.missingSamples += Int(sample.seq - last.seq - 1) }
                    }
                    let step = sample.timestamp - last.timestamp
                    if step <= 0 || step > 1.5 * period { figures.timestampGaps += 1 }
                }
                previous = sample
            }
        }
        return figures
    }

    static func occurrences(of pattern: [UInt8], in bytes: [UInt8]) -> Int {
        guard !pattern.isEmpty, bytes.count >= pattern.count else { return 0 }
        var count = 0
        var i = 0
        while i <= bytes.count - pattern.count {
            if bytes[i] == pattern[0] && bytes[i..<i + pattern.count].elementsEqual(pattern) {
                count += 1
                i += pattern.count
            } else {
                i += 1
            }
        }
        return count
    }

    /// Bytes of an MQTT 5 PUBLISH packet: fixed header (1 byte + the remaining length as a 1–4 byte varint),
    /// topic length (2) and topic, packet id (2, QoS > 0 only), property length (1: the agent sends none), payload.
    static func publishPacketBytes(topicBytes: Int, payloadBytes: Int, qos: Int) -> Int {
        let remaining = 2 + topicBytes + (qos > 0 ? 2 : 0) + 1 + payloadBytes
        var lengthBytes = 1
        var rest = remaining >> 7
        while rest > 0 {
            lengthBytes += 1
            rest >>= 7
        }
        return 1 + lengthBytes + remaining
    }
}
