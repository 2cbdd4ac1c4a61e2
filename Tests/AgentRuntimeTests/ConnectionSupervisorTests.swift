import AgentControl
import AgentPipeline
import AgentPorts
import AgentRuntime
import MotionWire
import Testing

/// The connection supervisor's decisions, driven event by event with a manual clock: no broker, no sleeps.
@Suite struct ConnectionSupervisorTests {
    typealias Supervisor = ConnectionSupervisor<ManualClock>

    /// Base 1 s, cap 8 s: the n-th wait is in [½·d, d] with d = min(8, 2ⁿ).
    private func make(_ clock: ManualClock) -> Supervisor {
        Supervisor(clock: clock, backoff: Backoff(base: 1, cap: 8, seed: 42))
    }

    private func waitDeadline(_ actions: [Supervisor.Action]) -> ManualClock.Instant? {
        for case .wait(let deadline) in actions { return deadline }
        return nil
    }

    private func retryIn(_ actions: [Supervisor.Action]) -> Double? {
        for case .writeHealth(_, _, _, let retryIn) in actions { return retryIn }
        return nil
    }

    @Test func startConnectsAndEveryConnackIsFollowedByTheBirthThenTheSubscriptionThenThePublisher() {
        let clock = ManualClock()
        var supervisor = make(clock)
        #expect(
            supervisor.handle(.start) == [
                .writeHealth(.connecting, lastError: nil, failures: 0, retryIn: nil), .connect,
            ]
        )
        #expect(supervisor.phase == .connecting)
        #expect(supervisor.handle(.start) == [], "one first attempt only")
        let connected = supervisor.handle(.connected(sessionPresent: false))
        #expect(
            connected == [
                .writeHealth(.connected, lastError: nil, failures: 0, retryIn: nil),
                .log(.info, "connected to the broker (session present: false)"),
                .subscribeControl, .publishBirth, .setPublisherConnected(true),
                .reportConnected,
            ]
        )
        #expect(supervisor.phase == .connected)
    }

    @Test func aLostConnectionWaitsOutTheBackOffThenReconnectsAndTheNextConnackBornsAgain() throws {
        let clock = ManualClock()
        var supervisor = make(clock)
        _ = supervisor.handle(.start)
        _ = supervisor.handle(.connected(sessionPresent: false))
        let lost = supervisor.handle(.disconnected(reason: "keepalive timeout", expected: false))
        #expect(lost.first == .setPublisherConnected(false))
        let delay = try #require(retryIn(lost))
        #expect(delay >= 0.5 && delay <= 1, "the first wait is in [½, 1] s")
        #expect(
            lost.contains(
                .writeHealth(
                    .connecting,
                    lastError: "connection to the broker lost: keepalive timeout",
                    failures: 0,
                    retryIn: delay
                )
            )
        )
        let deadline = try #require(waitDeadline(lost))
        #expect(supervisor.phase == .waiting(until: deadline))

        // Early ticks do nothing; the one at the deadline reconnects.
        clock.advance(by: .milliseconds(499))
        #expect(supervisor.handle(.tick) == [])
        clock.advance(by: deadline.offset - clock.now.offset)
        #expect(supervisor.handle(.tick) == [.connect])
        #expect(supervisor.handle(.tick) == [], "one attempt per wait")
        #expect(supervisor.handle(.connected(sessionPresent: true)).contains(.publishBirth))
    }

    @Test func failuresBackOffExponentiallyUpToTheCapAndAConnackResetsTheCount() throws {
        let clock = ManualClock()
        var supervisor = make(clock)
        _ = supervisor.handle(.start)
        var delays: [Double] = []
        for attempt in 1...6 {
            let actions = supervisor.handle(.connectFailed(reason: "connection refused", isAuthorization: false))
            #expect(actions.first == .reportConnectFailed)
            let delay = try #require(retryIn(actions))
            #expect(
                actions.contains(
                    .writeHealth(.connecting, lastError: "connection refused", failures: attempt, retryIn: delay)
                )
            )
            #expect(supervisor.failures == attempt)
            delays.append(delay)
            clock.advance(by: .seconds(9))
            #expect(supervisor.handle(.tick) == [.connect])
        }
        let ceilings: [Double] = [1, 2, 4, 8, 8, 8]
        for (delay, ceiling) in zip(delays, ceilings) { #expect(delay >= ceiling / 2 && delay <= ceiling) }

        _ = supervisor.handle(.connected(sessionPresent: false))
        #expect(supervisor.failures == 0)
        let after = supervisor.handle(.connectFailed(reason: "connection refused", isAuthorization: false))
        #expect(try #require(retryIn(after)) <= 1, "a CONNACK resets the back-off")
    }

    @Test func refusedCredentialsWaitAtLeastAMinuteAndSaySoInTheHealthFile() throws {
        let clock = ManualClock()
        var supervisor = make(clock)
        _ = supervisor.handle(.start)
        let actions = supervisor.handle(.connectFailed(reason: "not authorized", isAuthorization: true))
        #expect(actions.contains(.writeHealth(.refused, lastError: "not authorized", failures: 1, retryIn: 60)))
        #expect(actions.contains(.log(.error, "not authorized — retrying in 60.0 s")))
        clock.advance(by: .seconds(59))
        #expect(supervisor.handle(.tick) == [])
        clock.advance(by: .seconds(1))
        #expect(supervisor.handle(.tick) == [.connect])
    }

    @Test func shutdownWhileConnectedSaysGoodbyeThenDisconnectsAndNeverReconnects() {
        let clock = ManualClock()
        var supervisor = make(clock)
        _ = supervisor.handle(.start)
        _ = supervisor.handle(.connected(sessionPresent: false))
        #expect(supervisor.handle(.shutdown) == [.publishGoodbye, .disconnect])
        #expect(supervisor.phase == .stopped)
        #expect(
            supervisor.handle(.disconnected(reason: "as requested", expected: true)) == [.setPublisherConnected(false)]
        )
        #expect(supervisor.handle(.disconnected(reason: "lost", expected: false)) == [.setPublisherConnected(false)])
        clock.advance(by: .seconds(3600))
        #expect(supervisor.handle(.tick) == [])
        #expect(supervisor.handle(.shutdown) == [])
    }

    @Test func shutdownDuringABackOffDisconnectsWithoutAGoodbyeAndCancelsTheRetry() {
        let clock = ManualClock()
        var supervisor = make(clock)
        _ = supervisor.handle(.start)
        _ = supervisor.handle(.connectFailed(reason: "connection refused", isAuthorization: false))
        #expect(supervisor.handle(.shutdown) == [.disconnect])
        clock.advance(by: .seconds(3600))
        #expect(supervisor.handle(.tick) == [], "no attempt after the shutdown")
    }
}
