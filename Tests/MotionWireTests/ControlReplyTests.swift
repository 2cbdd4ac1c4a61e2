import Foundation
import MotionModel
import MotionWire
import Testing

/// Replies as bytes on the wire (golden JSON, the bytes JSONSerialization wrote before replies were typed), read
/// back as `motion-agent ctl` reads them, and the one mapping from refusal kinds to wire codes.
@Suite struct ControlReplyTests {
    static let streamJSON =
        #"{"available":true,"batch":1,"enabled":true,"encoding":"json","qos":0,"rateHz":100,"requestedRateHz":500,"retain":false}"#
    static let stream = try! JSONDecoder().decode(AgentStatus.Stream.self, from: Data(streamJSON.utf8))

    private func text(_ reply: ControlReply) -> String { String(decoding: reply.encoded(), as: UTF8.self) }

    @Test func anAppliedReplyHasSortedKeysAndItsResult() {
        let reply = ControlReply.applied(
            id: "a",
            device: "dev1",
            result: .ping(ControlResult.Ping(time: 1_763_700_000.5))
        )
        #expect(
            text(reply)
                == #"{"code":200,"device":"dev1","id":"a","message":"ok","ok":true,"result":{"time":1763700000.5}}"#
        )
    }

    @Test func aRefusalCarriesANullIDAndNoResult() {
        let reply = ControlReply.refused(ControlFailure(.rateLimited, "slow down / retry"), device: "dev1")
        #expect(text(reply) == #"{"code":429,"device":"dev1","id":null,"message":"slow down \/ retry","ok":false}"#)
    }

    @Test(arguments: [
        (
            ControlResult.stream(stream),
            #"{"available":true,"batch":1,"enabled":true,"encoding":"json","qos":0,"rateHz":100,"requestedRateHz":500,"retain":false}"#
        ),
        (.pedometerReset(ControlResult.PedometerReset()), #"{"numberOfSteps":0}"#),
        (
            .pedometerQuery(
                ControlResult.PedometerQuery(
                    PedometerData(startDate: 100, endDate: 200, numberOfSteps: 20, distance: 12.5)
                )
            ),
            #"{"averageActivePace":null,"currentCadence":null,"currentPace":null,"distance":12.5,"endDate":200,"floorsAscended":null,"floorsDescended":null,"numberOfSteps":20,"startDate":100}"#
        ),
        (
            .activityQuery([
                ControlResult.ActivitySegment(MotionActivity(startDate: 100, walking: true, confidence: .high))
            ]),
            #"[{"automotive":false,"confidence":"high","cycling":false,"running":false,"startDate":100,"stationary":false,"unknown":false,"walking":true}]"#
        ),
        (
            .reload(ReloadReport(changedStreams: ["gyroscope"], needsRestart: ["mqtt"])),
            #"{"changedStreams":["gyroscope"],"message":"applied to: gyroscope; restart the agent to apply: mqtt","needsRestart":["mqtt"]}"#
        ),
        (
            .streams(["gyroscope": stream]),
            #"{"gyroscope":{"available":true,"batch":1,"enabled":true,"encoding":"json","qos":0,"rateHz":100,"requestedRateHz":500,"retain":false}}"#
        ),
    ])
    func resultsAreWrittenAsBefore(result: ControlResult, golden: String) {
        let reply = ControlReply.applied(id: "g", device: "dev1", result: result)
        #expect(
            text(reply) == #"{"code":200,"device":"dev1","id":"g","message":"ok","ok":true,"result":"# + golden + "}"
        )
    }

    /// `encoded()` writes the reply by hand: the same bytes as `JSONEncoder` with sorted keys, whatever the
    /// device id, command id and message hold (they come from the network).
    @Test(arguments: [
        "plain", "a/b/c", #"quote " and back \ slash"#, "new\nline\ttab\r", "\u{01}\u{1F}\u{7F}", "é ∑ 🚀", "",
        "\u{2028}",
    ])
    func aHandWrittenReplyIsWhatJSONEncoderWrites(text: String) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let replies = [
            ControlReply.applied(id: text, device: text, result: .ping(.init(time: 1_763_700_000.125))),
            ControlReply.applied(id: "p", device: "d", result: .ping(.init(time: -0.5))),
            ControlReply.applied(id: "p", device: "d", result: .ping(.init(time: 1e-7))),
            ControlReply.applied(id: "r", device: text, result: .pedometerReset(.init())),
            ControlReply.applied(id: "s", device: "d", result: .stream(Self.stream)),
            ControlReply.refused(ControlFailure(.malformed, text), device: text),
            ControlReply.refused(ControlFailure(.unknown, id: text, text), device: "d"),
        ]
        for reply in replies {
            #expect(
                String(decoding: reply.encoded(), as: UTF8.self)
                    == String(decoding: try encoder.encode(reply), as: UTF8.self)
            )
        }
    }

    @Test func repliesReadBackWithTheirCommandsShape() throws {
        let status = try JSONDecoder().decode(
            AgentStatus.self,
            from: Data(
                #"{"agentVersion":"0.1.0","bootCount":3,"device":"dev1","schemaVersion":1,"source":"replay","state":"online","streams":{"gyroscope":\#(Self.streamJSON)},"time":1763700000.25}"#
                    .utf8
            )
        )
        let cases: [ControlResult] = [
            .stream(Self.stream),
            .status(status),
            .streams(["gyroscope": Self.stream]),
            .ping(ControlResult.Ping(time: 12.5)),
            .pedometerReset(ControlResult.PedometerReset()),
            .pedometerQuery(ControlResult.PedometerQuery(PedometerData(startDate: 1, endDate: 2, numberOfSteps: 3))),
            .activityQuery([ControlResult.ActivitySegment(MotionActivity(startDate: 4, cycling: true))]),
            .reload(ReloadReport(changedStreams: [], needsRestart: [])),
        ]
        for result in cases {
            let reply = ControlReply.applied(id: "\(result.shape)", device: "dev1", result: result)
            #expect(try ControlReply.decode(reply.encoded(), shape: result.shape) == reply, "\(result.shape)")
        }
        let refused = ControlReply.refused(ControlFailure(.unknown, id: "r", "no such stream"), device: "dev1")
        #expect(try ControlReply.decode(refused.encoded(), shape: .stream) == refused)
        // Without the command's shape the result's shape is unknown: refused rather than guessed.
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode(
                ControlReply.self,
                from: Data(ControlReply.applied(id: "p", device: "d", result: .ping(.init(time: 1))).encoded())
            )
        }
    }

    @Test(arguments: [
        (ControlFailure.Kind.malformed, 400), (.tooLarge, 400), (.unauthorized, 401), (.unknown, 404), (.conflict, 409),
        (.expired, 409), (.rateLimited, 429), (.internalFailure, 500),
    ])
    func eachKindHasItsWireCode(kind: ControlFailure.Kind, code: Int) {
        #expect(ControlReply.code(for: kind) == code)
        #expect(ControlReply.refused(ControlFailure(kind, "x"), device: "d").code == code)
    }

    @Test func everyWireCodeIsOneTheReplySchemaAllows() throws {
        let schema = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("docs/schemas/control-reply.schema.json")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: schema)) as? [String: Any])
        let properties = try #require(object["properties"] as? [String: Any])
        let allowed = try #require((properties["code"] as? [String: Any])?["enum"] as? [Int])
        for kind in ControlFailure.Kind.allCases {
            #expect(allowed.contains(ControlReply.code(for: kind)), "\(kind)")
        }
        #expect(allowed.contains(200))
    }
}
