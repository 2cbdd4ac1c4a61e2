import AgentControl
import AgentPipeline
import AgentPorts
import Foundation
import MotionWire
import Testing

/// Signed commands through a real `ControlPlane`: accepted when intact and fresh; refused (401, no change) when
/// unsigned, tampered, signed with another key, stale, or reusing a nonce.
@Suite struct CommandSignatureTests {
    static let key = Array("0123456789abcdef0123456789abcdef".utf8)
    static let signer = CommandSignature(key: key)

    static func signed(
        _ f: ControlFuzzTests.Fixture,
        id: String,
        command: String = "stop",
        stream: String? = "gyroscope",
        age: Double = 0,
        nonce: String? = nil,
        key: [UInt8] = key
    ) -> [UInt8] {
        var object: [String: Any] = [
            "id": id, "command": command, "timestamp": f.clock.value - age, "nonce": nonce ?? "n-\(id)-0123456789",
        ]
        if let stream { object["stream"] = stream }
        return CommandSignature(key: key).envelope(for: ControlFuzzTests.json(object))
    }

    static func handle(_ f: ControlFuzzTests.Fixture, _ payload: [UInt8]) -> [String: Any]? {
        f.plane.handle(ControlFuzzTests.message(payload)).flatMap(ControlFuzzTests.reply)
    }

    static func gyroscopeEnabled(_ f: ControlFuzzTests.Fixture) -> Bool? { f.status.streams?["gyroscope"]?.enabled }

    @Test func theKnownAnswerMatchesRFC4231() {
        // RFC 4231 §4.2, test case 1: a 20-byte key of 0x0b, data "Hi There".
        let signer = CommandSignature(key: [UInt8](repeating: 0x0B, count: 20))
        #expect(
            signer.signature(of: Array("Hi There".utf8))
                == "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"
        )
    }

    @Test func anIntactFreshCommandIsApplied() throws {
        let f = try ControlFuzzTests.fixture(hmacKey: Self.key)
        let r = try #require(Self.handle(f, Self.signed(f, id: "ok1")))
        #expect(r["ok"] as? Bool == true && r["code"] as? Int == 200 && r["id"] as? String == "ok1")
        #expect(Self.gyroscopeEnabled(f) == false)
    }

    @Test func unsignedTamperedAndForeignCommandsAreRefused() throws {
        let f = try ControlFuzzTests.fixture(hmacKey: Self.key)
        let before = f.status
        let unsigned = Array(#"{"id":"u1","command":"stop","stream":"gyroscope"}"#.utf8)
        let u = try #require(Self.handle(f, unsigned))
        #expect(u["code"] as? Int == 401 && u["id"] as? String == "u1")
        #expect((u["message"] as? String)?.contains("not signed") == true, "\(u)")

        // Tampered: the signed command says stop gyroscope; the attacker swaps in the accelerometer.
        let envelope = try #require(
            try JSONSerialization.jsonObject(with: Data(Self.signed(f, id: "t1"))) as? [String: String]
        )
        let original = String(decoding: Data(base64Encoded: envelope["signed"]!)!, as: UTF8.self)
        let altered = original.replacingOccurrences(of: "gyroscope", with: "accelerometer")
        let tampered = ControlFuzzTests.json([
            "signed": Data(altered.utf8).base64EncodedString(), "signature": envelope["signature"]!,
        ])
        let t = try #require(Self.handle(f, tampered))
        #expect(t["code"] as? Int == 401 && t["id"] as? String == "t1")
        #expect((t["message"] as? String)?.contains("does not match") == true, "\(t)")

        let foreign = Self.signed(f, id: "k1", key: Array("another-key-of-enough-bytes".utf8))
        #expect(Self.handle(f, foreign)?["code"] as? Int == 401)
        let extraKey = ControlFuzzTests.json([
            "signed": envelope["signed"]!, "signature": envelope["signature"]!, "id": "x",
        ])
        #expect(Self.handle(f, extraKey)?["code"] as? Int == 401)
        let uppercase = ControlFuzzTests.json([
            "signed": envelope["signed"]!, "signature": envelope["signature"]!.uppercased(),
        ])
        #expect(Self.handle(f, uppercase)?["code"] as? Int == 401)
        #expect(f.status == before, "no refused command changed anything")
    }

    @Test func staleAndFutureTimestampsAndMissingNoncesAreRefused() throws {
        let f = try ControlFuzzTests.fixture(hmacKey: Self.key)
        let before = f.status
        for (id, age) in [("old", 301.0), ("future", -301.0)] {
            let r = try #require(Self.handle(f, Self.signed(f, id: id, age: age)))
            #expect(r["code"] as? Int == 401 && r["id"] as? String == id)
            #expect((r["message"] as? String)?.contains("±300 s") == true, "\(r)")
        }
        let noNonce = Self.signer.envelope(
            for: ControlFuzzTests.json(["id": "nn", "command": "ping", "timestamp": f.clock.value])
        )
        #expect(Self.handle(f, noNonce)?["code"] as? Int == 401)
        let noTime = Self.signer.envelope(
            for: ControlFuzzTests.json(["id": "nt", "command": "ping", "nonce": "0123456789abcdef"])
        )
        #expect(Self.handle(f, noTime)?["code"] as? Int == 401)
        #expect(f.status == before)
        // Within the window both ways is fine.
        #expect(
            Self.handle(f, Self.signed(f, id: "edge", command: "ping", stream: nil, age: 299))?["code"] as? Int == 200
        )
        #expect(
            Self.handle(f, Self.signed(f, id: "edge2", command: "ping", stream: nil, age: -299))?["code"] as? Int == 200
        )
    }

    @Test func replaysAreNeverAppliedTwice() throws {
        let f = try ControlFuzzTests.fixture(hmacKey: Self.key)
        let stop = Self.signed(f, id: "r1", nonce: "nonce-stop-1")
        #expect(Self.handle(f, stop)?["code"] as? Int == 200)
        let start = Self.signed(f, id: "r2", command: "start", nonce: "nonce-start-1")
        #expect(Self.handle(f, start)?["code"] as? Int == 200)
        #expect(Self.gyroscopeEnabled(f) == true)
        // The captured stop, replayed byte for byte: indistinguishable from a QoS 1 redelivery — not applied,
        // not answered a second time.
        #expect(f.plane.handle(ControlFuzzTests.message(stop)) == nil)
        #expect(Self.gyroscopeEnabled(f) == true)
        // The same nonce under a new id: refused as a replay.
        let reused = try #require(Self.handle(f, Self.signed(f, id: "r3", nonce: "nonce-stop-1")))
        #expect(
            reused["code"] as? Int == 401 && (reused["message"] as? String)?.contains("already used") == true,
            "\(reused)"
        )
        #expect(Self.gyroscopeEnabled(f) == true)
    }

    @Test func aFullNonceLedgerForgetsTheOldestWithoutReopeningItsReplay() throws {
        let f = try ControlFuzzTests.fixture(hmacKey: Self.key, rememberedNonces: 2, rememberedIDs: 1)
        let first = Self.signed(f, id: "l1", command: "ping", stream: nil, age: 10, nonce: "ledger-nonce-1")
        #expect(Self.handle(f, first)?["code"] as? Int == 200)
        #expect(
            Self.handle(f, Self.signed(f, id: "l2", command: "ping", stream: nil, age: 5, nonce: "ledger-nonce-2"))?[
                "code"
            ] as? Int == 200
        )
        #expect(
            Self.handle(f, Self.signed(f, id: "l3", command: "ping", stream: nil, age: 0, nonce: "ledger-nonce-3"))?[
                "code"
            ] as? Int == 200
        )
        // l1's nonce and id are forgotten now, but its timestamp is at the ledger's floor: still refused.
        let replay = try #require(Self.handle(f, first))
        #expect(replay["code"] as? Int == 401 && replay["id"] as? String == "l1", "\(replay)")
        #expect(
            (replay["message"] as? String)?.contains("oldest command this device still remembers") == true,
            "\(replay)"
        )
    }
}
