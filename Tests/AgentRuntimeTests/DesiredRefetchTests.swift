import Testing

@testable import AgentRuntime

@Suite struct DesiredRefetchTests {
    /// The agent's counters: messages dropped, and messages offered to the inbox.
    struct Counters {
        var dropped: UInt64 = 0
        var arrived: UInt64 = 0
    }

    @Test func aFloodsDropsGiveOneSubscriptionWhenTheyStopAndOneMoreWhenTheTailHasPassed() {
        var refetch = DesiredRefetch(dropped: 0, arrived: 0)
        #expect(refetch.idle)
        var c = Counters()
        // The flood: arrivals and drops growing for three ticks, the inbox full.
        for _ in 0..<3 {
            c.arrived += 5000
            c.dropped += 4000
            #expect(refetch.tick(dropped: c.dropped, arrived: c.arrived, inboxEmpty: false, connected: true) == nil)
            #expect(!refetch.idle)
        }
        // The drops stop; the backlog still arrives and waits: the first subscription again.
        c.arrived += 300
        #expect(
            refetch.tick(dropped: c.dropped, arrived: c.arrived, inboxEmpty: false, connected: true)
                == .dropped(12_000)
        )
        // The retained documents it brings, then the inbox drains: not quiet while anything waits.
        c.arrived += 3
        #expect(refetch.tick(dropped: c.dropped, arrived: c.arrived, inboxEmpty: false, connected: true) == nil)
        #expect(refetch.tick(dropped: c.dropped, arrived: c.arrived, inboxEmpty: false, connected: true) == nil)
        #expect(refetch.tick(dropped: c.dropped, arrived: c.arrived, inboxEmpty: true, connected: true) == nil)
        #expect(!refetch.idle)
        // Two quiet ticks with the inbox empty: once more.
        let reason = refetch.tick(dropped: c.dropped, arrived: c.arrived, inboxEmpty: true, connected: true)
        guard case .quietAfter(let messages, let ticks) = reason else {
            Issue.record("expected a subscription once more, got \(String(describing: reason))")
            return
        }
        #expect(messages >= DesiredRefetch.burstMessages)
        #expect(ticks == DesiredRefetch.quietTicks)
        #expect(refetch.idle)
        // And nothing after: the subscription's own retained documents are a small stretch.
        c.arrived += 3
        for _ in 0..<5 {
            #expect(refetch.tick(dropped: c.dropped, arrived: c.arrived, inboxEmpty: true, connected: true) == nil)
        }
        #expect(refetch.idle)
    }

    /// The broker's silent drops: a burst the inbox took whole (no drop of the agent's own) still ends in a
    /// subscription once more.
    @Test func aBurstWithoutDropsEndsInOneSubscriptionOnceMore() {
        var refetch = DesiredRefetch(dropped: 7, arrived: 40)
        #expect(refetch.tick(dropped: 7, arrived: 40 + 900, inboxEmpty: false, connected: true) == nil)
        #expect(refetch.tick(dropped: 7, arrived: 40 + 1000, inboxEmpty: false, connected: true) == nil)
        #expect(refetch.tick(dropped: 7, arrived: 40 + 1000, inboxEmpty: true, connected: true) == nil)
        #expect(
            refetch.tick(dropped: 7, arrived: 40 + 1000, inboxEmpty: true, connected: true)
                == .quietAfter(messages: 1000, ticks: 2)
        )
        #expect(refetch.idle)
    }

    @Test func commandsOneAtATimeNeverMakeItSubscribeAgain() {
        var refetch = DesiredRefetch(dropped: 0, arrived: 0)
        var arrived: UInt64 = 0
        for tick in 0..<600 {
            if tick % 3 == 0 { arrived += 1 }
            #expect(refetch.tick(dropped: 0, arrived: arrived, inboxEmpty: true, connected: true) == nil)
        }
        // A stretch that never pauses for two ticks grows past the burst: when it ends, once more.
        var busy = DesiredRefetch(dropped: 0, arrived: 0)
        arrived = 0
        for _ in 0..<150 {
            arrived += 1
            #expect(busy.tick(dropped: 0, arrived: arrived, inboxEmpty: true, connected: true) == nil)
        }
        #expect(busy.tick(dropped: 0, arrived: arrived, inboxEmpty: true, connected: true) == nil)
        #expect(
            busy.tick(dropped: 0, arrived: arrived, inboxEmpty: true, connected: true)
                == .quietAfter(messages: 150, ticks: 2)
        )
    }

    @Test func whileDisconnectedItWaitsAndSubscribesOnceConnected() {
        var refetch = DesiredRefetch(dropped: 0, arrived: 0)
        #expect(refetch.tick(dropped: 50, arrived: 2000, inboxEmpty: false, connected: false) == nil)
        #expect(refetch.tick(dropped: 50, arrived: 2000, inboxEmpty: true, connected: false) == nil)
        #expect(refetch.tick(dropped: 50, arrived: 2000, inboxEmpty: true, connected: true) == .dropped(50))
        #expect(refetch.tick(dropped: 50, arrived: 2000, inboxEmpty: true, connected: true) == nil)
        #expect(refetch.tick(dropped: 50, arrived: 2000, inboxEmpty: true, connected: false) == nil)
        #expect(
            refetch.tick(dropped: 50, arrived: 2000, inboxEmpty: true, connected: true)
                == .quietAfter(messages: 2000, ticks: 3)
        )
    }
}
