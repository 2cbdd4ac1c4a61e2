import AgentConfig
import AgentControl
import AgentPipeline
import AgentPorts
import MotionWire
import Testing

@Suite struct ControlRequestTests {
    private func parse(_ text: String) -> Result<ControlRequest, ControlFailure> {
        ControlRequest.parse(Array(text.utf8))
    }

    /// A setting command as the config schema reads `streams.<stream>.<key>: value`.
    private static func sets(_ stream: StreamName, _ key: String, _ value: String) -> ControlCommand {
        let settings = try! ConfigurationOverlay(
            validating: ["streams.\(stream.rawValue).\(key)": value],
            source: "test"
        )
        return .configure(settings, stream: stream)
    }

    @Test(arguments: [
        (#"{"id":"1","command":"start","stream":"gyroscope"}"#, sets(.gyroscope, "enabled", "true")),
        (#"{"id":"2","command":"stop","stream":"accelerometer"}"#, sets(.accelerometer, "enabled", "false")),
        (
            #"{"id":"3","command":"set-rate","stream":"magnetometer","rate_hz":12.5}"#,
            sets(.magnetometer, "rate_hz", "12.5")
        ),
        (#"{"id":"4","command":"set-rate","stream":"gyroscope","interval_s":0.02}"#, sets(.gyroscope, "rate_hz", "50")),
        (#"{"id":"5","command":"set-qos","stream":"gyroscope","qos":1}"#, sets(.gyroscope, "qos", "1")),
        (#"{"id":"6","command":"set-retain","stream":"gyroscope","retain":true}"#, sets(.gyroscope, "retain", "true")),
        (#"{"id":"7","command":"status"}"#, .status),
        (#"{"id":"8","command":"list-streams","timestamp":1763700000}"#, .listStreams),
        (#"{"id":"9","command":"set-reference-attitude"}"#, .captureReferenceAttitude),
        (
            #"{"id":"10","command":"clear-reference-attitude"}"#,
            sets(.deviceMotion, "reference_attitude", "none")
        ),
    ])
    func validCommands(text: String, expected: ControlCommand) throws {
        let request = try parse(text).get()
        #expect(request.command == expected)
    }

    @Test(arguments: [
        ("not json", 400, "not valid JSON"),
        ("[1,2]", 400, "JSON object"),
        (#"{"command":"status"}"#, 400, "\"id\" is required"),
        (#"{"id":7,"command":"status"}"#, 400, "\"id\" must be a string"),
        (#"{"id":"1"}"#, 400, "\"command\" is required"),
        (#"{"id":"1","command":"reboot"}"#, 404, "unknown command \"reboot\""),
        (#"{"id":"1","command":"start"}"#, 400, "needs \"stream\""),
        (#"{"id":"1","command":"start","stream":"barometer"}"#, 404, "unknown stream \"barometer\""),
        (#"{"id":"1","command":"set-rate","stream":"gyroscope"}"#, 400, "exactly one of"),
        (#"{"id":"1","command":"set-rate","stream":"gyroscope","rate_hz":"fast"}"#, 400, "must be a number"),
        (#"{"id":"1","command":"set-rate","stream":"gyroscope","rate_hz":-5}"#, 400, "out of range"),
        (#"{"id":"1","command":"set-rate","stream":"gyroscope","rate_hz":1e300}"#, 400, "out of range"),
        (#"{"id":"1","command":"set-rate","stream":"gyroscope","rate_hz":true}"#, 400, "must be a number"),
        (#"{"id":"1","command":"set-rate","stream":"gyroscope","rate_hz":5,"interval_s":1}"#, 400, "exactly one of"),
        (#"{"id":"1","command":"set-qos","stream":"gyroscope","qos":3}"#, 400, "allowed: 0, 1 or 2"),
        (#"{"id":"1","command":"set-retain","stream":"gyroscope","retain":1}"#, 400, "true or false"),
        (#"{"id":"1","command":"status","verbose":true}"#, 400, "\"verbose\" is not an argument"),
    ])
    func badCommandsNameTheProblem(text: String, code: Int, fragment: String) {
        switch parse(text) {
        case .success(let r): Issue.record("accepted \(r)")
        case .failure(let f):
            #expect(ControlReply.code(for: f.kind) == code)
            #expect(f.message.contains(fragment), "\(f.message)")
        }
    }

    @Test func invalidUTF8AndOversizedPayloadsAreRefused() {
        if case .failure(let f) = ControlRequest.parse([0x7B, 0xFF, 0xFE, 0x7D]) {
            #expect(f.message.contains("UTF-8"))
        } else {
            Issue.record("invalid UTF-8 accepted")
        }
        let big =
            Array(#"{"id":"1","command":"status","pad":""#.utf8) + [UInt8](repeating: 0x41, count: 10_000)
            + Array(#""}"#.utf8)
        if case .failure(let f) = ControlRequest.parse(big) {
            #expect(f.message.contains("at most 8192"))
        } else {
            Issue.record("oversized payload accepted")
        }
    }
}

@Suite struct HistoryQueryCommandTests {
    @Test(arguments: [
        (
            #"{"id":"q","command":"query-pedometer","from":1763700000,"to":1763703600}"#, 1_763_700_000.0,
            1_763_703_600.0
        ),
        (
            #"{"id":"q","command":"query-activity","from":"2025-11-21T04:40:00Z","to":"2025-11-21T05:40:00.5Z"}"#,
            1_763_700_000.0, 1_763_703_600.5
        ),
        // Offsets, lowercase separators, a leap day, and fraction digits past nanoseconds (read and ignored).
        (
            #"{"id":"q","command":"query-pedometer","from":"2025-11-21T05:40:00+01:00","to":"2025-11-20t23:10:00.25-06:30"}"#,
            1_763_700_000.0, 1_763_703_600.25
        ),
        (
            #"{"id":"q","command":"query-pedometer","from":"2024-02-29T00:00:00z","to":"2024-03-01T00:00:00.1250000000000000000000000000001Z"}"#,
            1_709_164_800.0, 1_709_251_200.125
        ),
    ])
    func timesAreUnixSecondsOrISO8601(text: String, from: Double, to: Double) throws {
        let r = try ControlRequest.parse(Array(text.utf8)).get()
        switch r.command {
        case .queryPedometer(let a, let b), .queryActivity(let a, let b):
            #expect(a == from && b == to)
        default: Issue.record("\(r.command)")
        }
    }

    @Test(arguments: [
        #"{"id":"q","command":"query-pedometer","from":10}"#,
        #"{"id":"q","command":"query-pedometer","from":10,"to":"yesterday"}"#,
        #"{"id":"q","command":"query-activity","from":20,"to":10}"#,
        // FuzzControl's crash (CI, stop 24): ICU's date parser died of SIGFPE on a 50-digit fraction.
        #"{"id": "26", "command": "query-pedometer", "from": "2025-11-21T06:00:00Z", "to": "20216-1-21T07:00:0.0122222222222222222222222222222222222222222222222222222221-21TZ"}"#,
        #"{"id":"q","command":"query-pedometer","from":10,"to":"2025-02-29T00:00:00Z"}"#,
        #"{"id":"q","command":"query-pedometer","from":10,"to":"2025-11-21T24:00:00Z"}"#,
        #"{"id":"q","command":"query-pedometer","from":10,"to":"2025-11-21T06:00:00"}"#,
        #"{"id":"q","command":"query-pedometer","from":10,"to":"2025-11-21T06:00:00.Z"}"#,
        #"{"id":"q","command":"query-pedometer","from":10,"to":"2025-11-21T06:00:00+0100"}"#,
        #"{"id":"q","command":"query-pedometer","from":10,"to":"2025-11-21T06:00:00Z "}"#,
        #"{"id":"q","command":"query-pedometer","from":10,"to":"0000-01-01T00:00:00Z"}"#,
    ])
    func badTimesAreRefused(text: String) {
        if case .failure(let f) = ControlRequest.parse(Array(text.utf8)) {
            #expect(ControlReply.code(for: f.kind) == 400)
        } else {
            Issue.record("accepted \(text)")
        }
    }
}
