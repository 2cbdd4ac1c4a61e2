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
        admission.admit(bytes(text), retained: retained, now: now, clockSynchronized: synchronized)
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
            kind(a.admit([0x7B, 0xFF, 0xFE, 0x7D], retained: false, now: Self.now, clockSynchronized: true))
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

        let key = Array("admission-key-0123456789".utf8)
        var settings = ControlAdmission.Settings()
        settings.hmacKey = key
        var signed = ControlAdmission(settings: settings, now: Self.now)
        let command = #"{"command":"ping","id":"f","nonce":"nonce-0001","timestamp":17630000000000000006700001}"#
        let verdict = signed.admit(
            CommandSignature(key: key).envelope(for: Array(command.utf8)),
            retained: false,
            now: Self.now,
            clockSynchronized: true
        )
        guard case .refused(let future) = verdict else {
            Issue.record("a command stamped 1.7e25 was not refused: \(verdict)")
            return
        }
        #expect(future.kind == .unauthorized)
        #expect(future.message.contains("s ahead of the device clock"), "\(future.message)")
    }

    @Test func signedCommandsNeedAValidSignatureAFreshNonceAndACurrentStamp() {
        let key = Array("admission-key-0123456789".utf8)
        var settings = ControlAdmission.Settings()
        settings.hmacKey = key
        var a = ControlAdmission(settings: settings, now: Self.now)
        let signer = CommandSignature(key: key)
        func envelope(_ id: String, nonce: String, stamped: Double = Self.now) -> [UInt8] {
            signer.envelope(
                for: Array(#"{"command":"ping","id":"\#(id)","nonce":"\#(nonce)","timestamp":\#(stamped)}"#.utf8)
            )
        }
        func judge(_ payload: [UInt8]) -> ControlAdmission.Verdict {
            a.admit(payload, retained: false, now: Self.now, clockSynchronized: true)
        }
        #expect(kind(admit(&a, #"{"id":"u","command":"ping"}"#)) == .unauthorized)
        let signed = envelope("s1", nonce: "nonce-0001")
        guard case .admitted(let request) = judge(signed) else {
            Issue.record("a correctly signed command was not admitted")
            return
        }
        #expect(request.id == "s1" && request.command == .ping)
        // The same envelope again is a redelivery; the same nonce under another id is a replay.
        #expect(isIgnored(judge(signed)))
        #expect(kind(judge(envelope("s2", nonce: "nonce-0001"))) == .unauthorized)
        #expect(kind(judge(envelope("s3", nonce: "nonce-0003", stamped: Self.now - 3600))) == .unauthorized)
        var tampered = signed
        tampered[tampered.count / 2] ^= 0x01
        #expect(kind(judge(tampered)) != nil, "a tampered envelope must be refused")
        #expect(isAdmitted(judge(envelope("s4", nonce: "nonce-0004"))))
    }
}
