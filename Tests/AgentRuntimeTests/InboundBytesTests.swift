import AgentControl
import AgentPorts
import Logging
import Testing

@testable import AgentRuntime

/// What the agent takes from the broker, in bytes: the maximum packet size it announces, the control inbox's byte
/// budget, and the log's account of drops (one line per cause and interval, then one when they stop).
@Suite struct InboundBytesTests {
    @Test func theMaximumPacketSizeFitsTheLargestAcceptedPayloadOnTheLongestTopicWithItsProperties() {
        let topics = ["motion/dev-1/control", "motion/fleet/control", "motion/group/line-2/desired"]
        let size = InboundLimits.maximumPacketSize(subscriptions: topics, maxCommandBytes: 8192)
        // Desired documents (64 KiB) are the largest payload unless control.max_payload_bytes is set higher.
        #expect(size == 13 + "motion/group/line-2/desired".utf8.count + 4096 + 65536)
        let larger = InboundLimits.maximumPacketSize(subscriptions: topics, maxCommandBytes: 65536 + 1000)
        #expect(larger == size + 1000)
        // Far below what the shipped broker lets anyone publish (max_packet_size 1100000).
        #expect(size < 1_100_000)
    }

    private func message(_ bytes: Int, topic: String = "motion/d/control") -> InboundMessage {
        InboundMessage(topic: topic, payload: [UInt8](repeating: 0x7B, count: bytes), qos: 1, retain: false)
    }

    @Test func theInboxDropsPastItsByteBudgetAndCountsItAsOverBudget() async {
        let counters = ConnectionCounters()
        let inbox = ControlInbox(capacity: 100, byteBudget: 100_000, counters: counters)
        for _ in 0..<3 { inbox.offer(message(30_000)) }
        inbox.offer(message(30_000, topic: "motion/fleet/desired"))
        #expect(counters.inboundDropped == 1)
        #expect(counters.inboundOverBudget == 1)
        #expect(counters.drops.lastBehindTopic == "motion/fleet/desired")
        #expect(inbox.waitingBytes == 3 * (30_000 + 16))
        // Taking messages gives their bytes back.
        var iterator = inbox.messages.makeAsyncIterator()
        _ = await iterator.next()
        _ = await iterator.next()
        #expect(inbox.waitingBytes == 30_000 + 16)
        inbox.offer(message(60_000))
        #expect(counters.inboundDropped == 1)
    }

    @Test func theInboxMessageBoundIsNotOverBudget() {
        let counters = ConnectionCounters()
        let inbox = ControlInbox(capacity: 2, byteBudget: 1 << 20, counters: counters)
        for _ in 0..<3 { inbox.offer(message(10)) }
        #expect(counters.inboundDropped == 1)
        #expect(counters.inboundOverBudget == 0)
        // The dropped message's bytes were given back.
        #expect(inbox.waitingBytes == 2 * (10 + 16))
    }

    @Test func theCountersAddTheClientsDropsToTheInboxs() {
        let counters = ConnectionCounters(droppedByClient: {
            InboundDrops(
                behind: 5,
                overBudget: 2,
                oversize: 3,
                largestOversizeBytes: 16 << 20,
                lastBehindTopic: "a",
                lastOversizeTopic: "b"
            )
        })
        counters.countInboundDropped(topic: "c", overBudget: true)
        #expect(counters.inboundDropped == 6)
        #expect(counters.inboundOverBudget == 3)
        #expect(counters.inboundOversize == 3)
        #expect(counters.drops.lastBehindTopic == "c")
        #expect(counters.drops.lastOversizeTopic == "b")
    }

    @Test func theDropReportSaysWhatWhyAndWhereOncePerIntervalThenThatItStopped() {
        var report = InboundDropReport(maximumPacketSize: 72_000, queueBytes: 4 << 20)
        #expect(report.lines(after: InboundDrops(), seconds: 10).isEmpty)
        var drops = InboundDrops(
            behind: 300,
            overBudget: 120,
            oversize: 2,
            largestOversizeBytes: 16 << 20,
            // A topic with an escape sequence is printed harmless.
            lastBehindTopic: "motion/d/control\u{1B}[2J",
            lastOversizeTopic: "motion/d/desired"
        )
        let first = report.lines(after: drops, seconds: 10)
        #expect(first.count == 2)
        #expect(first.allSatisfy { $0.0 == .warning })
        let oversize = first[0].1
        #expect(oversize.contains("dropped 2 inbound messages larger than the 72000 bytes this agent accepts"))
        #expect(oversize.contains("largest so far 16777216 bytes, latest on \"motion/d/desired\""))
        #expect(oversize.contains("max_packet_size"))
        let flood = first[1].1
        #expect(flood.contains("dropped 300 inbound messages in the last 10 s"))
        #expect(flood.contains("120 of them because 4194304 bytes of inbound messages were already waiting"))
        #expect(flood.contains("latest on \"motion/d/control\\u{1B}[2J\""))
        #expect(!flood.contains("\u{1B}"))
        // The next interval: only what changed.
        drops.behind += 1
        let second = report.lines(after: drops, seconds: 10)
        #expect(second.count == 1)
        #expect(second[0].1.contains("dropped 1 inbound message in the last 10 s"))
        #expect(!second[0].1.contains("of them because"))
        // A quiet interval ends the episode, once.
        let quiet = report.lines(after: drops, seconds: 10)
        #expect(quiet.count == 1)
        #expect(quiet[0].0 == .notice)
        #expect(quiet[0].1.contains("no longer dropped (since the agent started: 301 behind, 2 too large)"))
        #expect(report.lines(after: drops, seconds: 10).isEmpty)
    }
}
