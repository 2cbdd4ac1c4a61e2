import AgentControl
import AgentPipeline
import Foundation
import MotionWire
import Testing

/// `ControlAdmission` alone: no broker, no controller, the clock passed in.
@Suite struct ControlAdmissionTests {
    static let now = 1_763_700_000.0

    private func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

    private func admit(
        _ admission: inout ControlAdmission,
        _ text: String,
        at now: Double = Self.now,
        retained: Bool = false,
        synchronized: Bool = true
    ) -> ControlAdmission.Verdict {
        admission.admit(
            bytes(text),
            topic: "motion/dev1/control",
            retained: retained,
            now: now,
            clockSynchronized: synchronized
        )
    }

    private func kind(_ verdict: ControlAdmission.Verdict) -> ControlFailure.Kind? {
        if case .refused(let f) = verdict { return f.kind }
        return nil
    }

    private func isAdmitted(_ verdict: ControlAdmission.Verdict) -> Bool {
        if case .admitted = verdict { return true }
        return false
    }

    private func isIgnored(_ verdict: ControlAdmission.Verdict) -> Bool {
        if case .ignored = verdict { return true }
        return false
    }

    @Test func aRetainedMessageIsIgnoredAndCostsNoToken() {
        var settings = ControlAdmission.Settings()
        settings.burst = 1
        var a = ControlAdmission(settings: settings, now: Self.now)
        #expect(isIgnored(admit(&a, #"{"id":"r","command":"ping"}"#, retained: true)))
        #expect(isAdmitted(admit(&a, #"{"id":"p","command":"ping"}"#)))
    }

    @Test func theRateLimitAllowsTheBurstThenRefillsWithTime() {
        var settings = ControlAdmission.Settings()
        settings.ratePerSecond = 2
        settings.burst = 3
        var a = ControlAdmission(settings: settings, now: Self.now)
        let first = (0..<5).map { kind(admit(&a, #"{"id":"b\#($0)","command":"ping"}"#)) }
        #expect(first == [nil, nil, nil, .rateLimited, .rateLimited])
        // One second at 2 per second: two more, then refused again.
        let later = (0..<3).map { kind(admit(&a, #"{"id":"l\#($0)","command":"ping"}"#, at: Self.now + 1)) }
        #expect(later == [nil, nil, .rateLimited])
    }

    @Test func sizeAndEncodingAreCheckedBeforeParsing() {
        var settings = ControlAdmission.Settings()
        settings.maxPayloadBytes = 64
        var a = ControlAdmission(settings: settings, now: Self.now)
        let big = #"{"id":"1","command":"ping","pad":""# + String(repeating: "x", count: 64) + #""}"#
        #expect(kind(admit(&a, big)) == .tooLarge)
        #expect(
            kind(
                a.admit(
                    [0x7B, 0xFF, 0xFE, 0x7D],
                    topic: "motion/dev1/control",
                    retained: false,
                    now: Self.now,
                    clockSynchronized: true
                )
            )
                == .malformed
        )
        #expect(kind(admit(&a, "[]")) == .malformed)
        #expect(kind(admit(&a, #"{"id":"1","command":"fly"}"#)) == .unknown)
    }

    @Test func aRedeliveredIDIsIgnoredUntilItIsForgotten() {
        var settings = ControlAdmission.Settings()
        settings.rememberedIDs = 2
        var a = ControlAdmission(settings: settings, now: Self.now)
        #expect(isAdmitted(admit(&a, #"{"id":"a","command":"ping"}"#)))
        #expect(isIgnored(admit(&a, #"{"id":"a","command":"ping"}"#)))
        #expect(isAdmitted(admit(&a, #"{"id":"b","command":"ping"}"#)))
        #expect(isAdmitted(admit(&a, #"{"id":"c","command":"ping"}"#)))
        // Only two ids are remembered: "a" is forgotten, so it is new again.
        #expect(isAdmitted(admit(&a, #"{"id":"a","command":"ping"}"#)))
    }

    @Test func oldCommandsAreRefusedOnlyWhenTheClockCanTell() {
        var a = ControlAdmission(settings: ControlAdmission.Settings(), now: Self.now)
        let old = #"{"id":"o","command":"ping","timestamp":\#(Self.now - 301)}"#
        #expect(kind(admit(&a, old)) == .expired)
        let unsynchronized = #"{"id":"u","command":"ping","timestamp":\#(Self.now - 301)}"#
        #expect(isAdmitted(admit(&a, unsynchronized, synchronized: false)))
        #expect(isAdmitted(admit(&a, #"{"id":"n","command":"ping","timestamp":\#(Self.now - 299)}"#)))
    }

    /// A timestamp is any finite number the sender wrote: ages far beyond Int's range are refused with a
    /// message, not a trap (libFuzzer's FuzzSignedControl found `"timestamp": 1.7e25` crashing the agent).
    @Test func absurdTimestampsAreRefusedWithoutATrap() throws {
        var a = ControlAdmission(settings: ControlAdmission.Settings(), now: Self.now)
        let ancient = admit(&a, #"{"id":"x","command":"ping","timestamp":-1e30}"#)
        guard case .refused(let failure) = ancient else {
            Issue.record("a command stamped -1e30 was not refused: \(ancient)")
            return
        }
        #expect(failure.kind == .expired)
        #expect(failure.message.contains("1000000000000000019884624838656 s old"), "\(failure.message)")
    }

    @Test func signedCommandsNeedATrustedSignatureTheirTopicAndARisingCounter() {
        var settings = ControlAdmission.Settings()
        settings.keys = TestOperator.trust()
        settings.refusalBurst = 100
        var a = ControlAdmission(settings: settings, now: Self.now)
        func judge(_ payload: [UInt8], topic: String = "motion/dev1/control") -> ControlAdmission.Verdict {
            a.admit(payload, topic: topic, retained: false, now: Self.now, clockSynchronized: true)
        }
        func ping(_ id: String, counter: Int, target: String = "motion/dev1/control") -> [UInt8] {
            TestOperator.signed(TestOperator.command(id, "ping"), target: target, counter: counter)
        }
        #expect(kind(admit(&a, #"{"id":"u","command":"ping"}"#)) == .unauthorized)
        let signed = ping("s1", counter: 1_763_700_000_000_001)
        guard case .admitted(let request) = judge(signed) else {
            Issue.record("a correctly signed command was not admitted")
            return
        }
        #expect(request.id == "s1" && request.command == .ping)
        // The same envelope again is a redelivery; the same counter under another id is a replay; a lower one
        // than everything remembered is too.
        #expect(isIgnored(judge(signed)))
        #expect(kind(judge(ping("s2", counter: 1_763_700_000_000_001))) == .unauthorized)
        #expect(kind(judge(ping("s3", counter: 12))) == .unauthorized, "below the time window's floor")
        // Signed for another device, or the fleet: refused here.
        #expect(kind(judge(ping("s4", counter: 1_763_700_000_000_004, target: "motion/dev2/control"))) == .unauthorized)
        #expect(kind(judge(ping("s5", counter: 1_763_700_000_000_005), topic: "motion/fleet/control")) == .unauthorized)
        var tampered = signed
        tampered[tampered.count / 2] ^= 0x01
        #expect(kind(judge(tampered)) != nil, "a tampered envelope must be refused")
        // An untrusted key under a trusted key's id, and a key id the device does not know.
        #expect(
            kind(
                judge(
                    TestOperator.signed(
                        TestOperator.command("i", "ping"),
                        counter: 1_763_700_000_000_006,
                        with: TestOperator.impostor
                    )
                )
            )
                == .unauthorized
        )
        #expect(
            kind(
                judge(
                    TestOperator.signed(
                        TestOperator.command("o", "ping"),
                        counter: 1_763_700_000_000_007,
                        with: TestOperator.otherKey
                    )
                )
            )
                == .unauthorized
        )
        // Refused for an untrusted key, the command's id comes back, so the operator's tool can say why.
        if case .refused(let failure) = judge(
            TestOperator.signed(
                TestOperator.command("o2", "ping"),
                counter: 1_763_700_000_000_008,
                with: TestOperator.otherKey
            )
        ) {
            #expect(failure.id == "o2" && failure.message.contains("does not trust"), "\(failure)")
        } else {
            Issue.record("a command signed with an untrusted key was not refused")
        }
        // Out of order but within the remembered counters: still fresh.
        #expect(isAdmitted(judge(ping("s8", counter: 1_763_700_000_000_003))))
        #expect(isAdmitted(judge(ping("s9", counter: 1_763_700_000_000_009))))
    }

    @Test func unverifiedJunkDoesNotUseTheSignedBudgetAndIsAnsweredOnlySoOften() {
        var settings = ControlAdmission.Settings()
        settings.keys = TestOperator.trust()
        settings.ratePerSecond = 1
        settings.burst = 2
        settings.refusalsPerSecond = 1
        settings.refusalBurst = 3
        var a = ControlAdmission(settings: settings, now: Self.now)
        var answered = 0
        var reports: [String] = []
        for i in 0..<100 {
            switch admit(&a, #"{"id":"junk\#(i)","command":"stop","stream":"gyroscope"}"#) {
            case .refused: answered += 1
            case .ignored(let reason) where !reason.isEmpty: reports.append(reason)
            default: break
            }
        }
        #expect(answered == 3, "the refusal burst, then silence")
        #expect(a.unansweredRefusals == 97)
        // One log line for the whole burst (the first unanswered one), not 97.
        #expect(
            reports.count == 1 && reports[0].hasPrefix("1 control message(s) refused without an answer"),
            "\(reports)"
        )
        let ok = TestOperator.signed(TestOperator.command("real", "ping"), counter: 1_763_700_000_000_100)
        #expect(
            isAdmitted(
                a.admit(ok, topic: "motion/dev1/control", retained: false, now: Self.now, clockSynchronized: true)
            )
        )
    }

    @Test func replayedSignedCommandsDoNotUseTheSignedBudget() {
        var settings = ControlAdmission.Settings()
        settings.keys = TestOperator.trust()
        settings.ratePerSecond = 1
        settings.burst = 3
        settings.refusalsPerSecond = 1
        settings.refusalBurst = 3
        var a = ControlAdmission(settings: settings, now: Self.now)
        func judge(_ payload: [UInt8]) -> ControlAdmission.Verdict {
            a.admit(payload, topic: "motion/dev1/control", retained: false, now: Self.now, clockSynchronized: true)
        }
        let captured = TestOperator.signed(TestOperator.command("c", "ping"), counter: 1_763_700_000_000_001)
        #expect(isAdmitted(judge(captured)))
        // The captured command sent again and again, and its counter under other ids: none draws on the budget…
        for i in 0..<100 {
            _ = judge(captured)
            _ = judge(TestOperator.signed(TestOperator.command("r\(i)", "ping"), counter: 1_763_700_000_000_001))
        }
        // …nor does a command refused for its age, once it was judged: its counter is used.
        let old = TestOperator.signed(
            TestOperator.command("old", "ping", timestamp: Self.now - 3600),
            counter: 1_763_700_000_000_002
        )
        #expect(kind(judge(old)) == .expired)
        for _ in 0..<100 { #expect(kind(judge(old)) != .expired) }
        #expect(a.unansweredRefusals >= 190, "the replays were refused within the refusals' budget")
        // Two tokens of three were taken (the first command, the expired one): the operator's next one passes.
        let next = TestOperator.signed(TestOperator.command("next", "ping"), counter: 1_763_700_000_000_003)
        #expect(isAdmitted(judge(next)), "a replay flood kept a signed command out")
    }

    @Test func aUsedCounterIsRefusedBeforeTheSignatureIsCheckedAndAnUnverifiedOneUsesNone() {
        var settings = ControlAdmission.Settings()
        settings.keys = TestOperator.trust()
        var a = ControlAdmission(settings: settings, now: Self.now)
        func message(_ payload: [UInt8], topic: String = "motion/dev1/control") -> String? {
            let verdict = a.admit(
                payload,
                topic: topic,
                retained: false,
                now: Self.now,
                clockSynchronized: true
            )
            if case .refused(let f) = verdict { return f.message }
            return nil
        }
        let used = 1_763_700_000_000_001
        let admitted = TestOperator.signed(TestOperator.command("c", "ping"), counter: used)
        #expect(message(admitted) == nil)
        // Moved to another topic, it is refused for its target (after the signature check), not as a replay.
        let moved = message(admitted, topic: "motion/fleet/control")
        #expect(moved?.contains("was signed for motion/dev1/control") == true, "\(moved ?? "admitted")")
        // An impostor's envelope under the trusted key's id: with a used counter it is refused as a replay, on the
        // claim alone (the signature check would have said "does not match")…
        let forgedReplay = TestOperator.signed(
            TestOperator.command("f1", "ping"),
            counter: used,
            with: TestOperator.impostor
        )
        #expect(message(forgedReplay)?.contains("was used already") == true, "\(message(forgedReplay) ?? "admitted")")
        // …and with a fresh counter it reaches the signature check, and is refused there without using the counter.
        let fresh = used + 1
        let forged = TestOperator.signed(
            TestOperator.command("f2", "ping"),
            counter: fresh,
            with: TestOperator.impostor
        )
        #expect(message(forged)?.contains("signature does not match") == true, "\(message(forged) ?? "admitted")")
        #expect(message(TestOperator.signed(TestOperator.command("real", "ping"), counter: fresh)) == nil)
    }
}
