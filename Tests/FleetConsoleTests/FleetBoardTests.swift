import AgentConfig
import Foundation
import MotionWire
import Testing

@testable import FleetConsole

/// The fleet view's aggregation: newest status per device, metrics, documents and what differs, and the
/// escaping of device text on its way to the page.
struct FleetBoardTests {
    static func status(
        _ device: String,
        state: String = "online",
        boot: Int = 1,
        time: Double = 1_795_000_000,
        groups: [String] = [],
        desired: [String: Int] = [:],
        refused: String? = nil,
        rateHz: Double = 50
    ) -> [UInt8] {
        var configuration: [String: Any] = ["groups": groups, "desired": desired]
        if let refused {
            configuration["refused"] = ["layer": "fleet", "version": 9, "reason": refused, "time": time]
        }
        let object: [String: Any] = [
            "state": state, "device": device, "agentVersion": "0.1.0", "schemaVersion": 1, "bootCount": boot,
            "time": time, "configuration": configuration,
            "streams": [
                "accelerometer": [
                    "enabled": true, "requestedRateHz": rateHz, "rateHz": rateHz, "qos": 0, "retain": false,
                    "available": true, "batch": 1, "encoding": "json",
                ]
            ],
        ]
        return Array(try! JSONSerialization.data(withJSONObject: object))
    }

    /// One node delivers a topic in publish order: its last status is the newest, and the will of a connection
    /// (whose time is when the connection began, before its birth's) means offline.
    @Test func theLastStatusOfANodeIsItsNewestAWillIncluded() throws {
        var board = FleetBoard(root: "motion/{device}")
        let result1 = board.receive(topic: "motion/a/status", payload: Self.status("a", boot: 2, time: 105))
        #expect(result1 == .device("a"))
        #expect(try #require(board.row(of: "a")).online)
        #expect(
            board.receive(topic: "motion/a/status", payload: Self.status("a", state: "offline", boot: 2, time: 100))
                == .device("a")
        )
        let row = try #require(board.row(of: "a"))
        #expect(!row.online)
        #expect(row.problem)
        #expect(row.since == 100)
    }

    /// A will says nothing of the configuration: the offline row keeps the versions its start had applied.
    @Test func anOfflineRowKeepsWhatItsStartHadApplied() throws {
        var board = FleetBoard(root: "motion/{device}")
        _ = board.receive(
            topic: "motion/a/status",
            payload: Self.status("a", boot: 4, time: 105, desired: ["fleet": 6])
        )
        let will: [String: Any] = [
            "state": "offline", "device": "a", "agentVersion": "0.1.0", "schemaVersion": 1, "bootCount": 4,
            "time": 100, "reason": "connection lost",
        ]
        _ = board.receive(topic: "motion/a/status", payload: Array(try JSONSerialization.data(withJSONObject: will)))
        let row = try #require(board.row(of: "a"))
        #expect(!row.online)
        #expect(row.desired == ["fleet": 6])
        // A will of a later start keeps nothing of the earlier one.
        _ = board.receive(topic: "motion/a/status", payload: Self.status("a", state: "offline", boot: 5, time: 200))
        #expect(try #require(board.row(of: "a")).desired.isEmpty)
    }

    /// Across nodes (a cluster whose nodes keep retained messages apart) the highest boot count, then time wins.
    @Test func acrossNodesTheHighestBootCountWins() throws {
        var board = FleetBoard(root: "motion/{device}")
        _ = board.receive(topic: "motion/a/status", payload: Self.status("a", boot: 3, time: 100), node: 0)
        _ = board.receive(
            topic: "motion/a/status",
            payload: Self.status("a", state: "offline", boot: 2, time: 200),
            node: 1
        )
        #expect(try #require(board.row(of: "a")).online)
        _ = board.receive(
            topic: "motion/a/status",
            payload: Self.status("a", state: "offline", boot: 3, time: 90),
            node: 0
        )
        #expect(try #require(board.row(of: "a")).online == false)
    }

    @Test func theDeviceIsTheTopicsNotTheBodys() throws {
        var board = FleetBoard(root: "motion/{device}")
        _ = board.receive(topic: "motion/b/status", payload: Self.status("someone-else"))
        let row = try #require(board.row(of: "b"))
        #expect(row.impostor == "someone-else")
        #expect(row.problem)
        #expect(board.row(of: "someone-else") == nil)
    }

    @Test func junkAndOtherTopicsChangeNothing() {
        var board = FleetBoard(root: "motion/{device}")
        let result2 = board.receive(topic: "motion/a/status", payload: Array("{not json".utf8))
        #expect(result2 == .none)
        let result3 = board.receive(topic: "motion/a/status", payload: [])
        #expect(result3 == .none)
        let result4 = board.receive(topic: "motion/a/accelerometer", payload: Array("{}".utf8))
        #expect(result4 == .none)
        let result5 = board.receive(topic: "elsewhere/a/status", payload: Self.status("a"))
        #expect(result5 == .none)
        #expect(board.count == 0)
    }

    @Test func aDesiredDocumentMarksItsScopeAndWhatDiffers() throws {
        var board = FleetBoard(root: "motion/{device}")
        _ = board.receive(topic: "motion/a/status", payload: Self.status("a", groups: ["lab"], desired: ["fleet": 1]))
        _ = board.receive(topic: "motion/b/status", payload: Self.status("b", desired: ["fleet": 1]))
        let document = Array(#"{"version": 2, "streams": {"accelerometer": {"rate_hz": 100}}}"#.utf8)
        #expect(
            board.receive(topic: "motion/fleet/desired", payload: document) == .document(topic: "motion/fleet/desired")
        )
        #expect(board.devices(concernedBy: "motion/fleet/desired") == ["a", "b"])
        #expect(board.devices(concernedBy: "motion/group/lab/desired") == ["a"])
        #expect(board.devices(concernedBy: "motion/b/desired") == ["b"])
        let row = try #require(board.row(of: "a"))
        let difference = try #require(row.differing.first)
        #expect(difference.key == "streams.accelerometer.rate_hz")
        #expect(difference.wanted == "100")
        #expect(difference.why.contains("v1 applied, v2 published"))
        #expect(board.documentSummaries.map(\.version) == [2])
        // Once the device reports it, nothing differs.
        _ = board.receive(
            topic: "motion/a/status",
            payload: Self.status("a", time: 1_795_000_001, groups: ["lab"], desired: ["fleet": 2], rateHz: 100)
        )
        #expect(try #require(board.row(of: "a")).differing.isEmpty)
    }

    @Test func theNewestDocumentOverTheNodesCounts() {
        var board = FleetBoard(root: "motion/{device}")
        _ = board.receive(topic: "motion/fleet/desired", payload: Array(#"{"version": 5}"#.utf8), node: 0)
        _ = board.receive(topic: "motion/fleet/desired", payload: Array(#"{"version": 3}"#.utf8), node: 1)
        #expect(board.documentSummaries.first?.version == 5)
        #expect(board.retainedPayloads(on: "motion/fleet/desired").count == 2)
    }

    @Test func metricsShowOnTheRow() throws {
        var board = FleetBoard(root: "motion/{device}")
        _ = board.receive(topic: "motion/a/status", payload: Self.status("a"))
        let metrics: [String: Any] = [
            "device": "a", "agentVersion": "0.1.0", "time": 1_795_000_010, "uptimeSeconds": 10, "bootCount": 1,
            "intervalSeconds": 60, "samples": ["read": 10, "invalid": 0],
            "messages": ["enqueued": 5, "published": 5, "failed": 0, "rejected": 0, "droppedOverflow": 2],
            "outbox": ["depth": 7, "bytes": 100],
            "connection": ["connected": true, "reconnects": 3, "failures": 0, "inboundDropped": 0],
            "process": ["cpuPercent": 1.5, "cpuSeconds": 2, "rssBytes": 12_000_000], "devices": [String: Any](),
        ]
        let payload = Array(try JSONSerialization.data(withJSONObject: metrics))
        let result6 = board.receive(topic: "motion/a/metrics", payload: payload)
        #expect(result6 == .device("a"))
        let row = try #require(board.row(of: "a"))
        #expect(row.outboxDepth == 7)
        #expect(row.metrics?.reconnects == 3)
        #expect(row.metrics?.dropped == 2)
    }

    /// A device id and a reason built to run as markup or to drive a terminal stay data: JSON strings, with the
    /// characters a terminal or a JavaScript source would act on escaped.
    @Test func deviceTextReachesThePageAsEscapedJSON() throws {
        var board = FleetBoard(root: "motion/{device}")
        let hostile = "<img src=x onerror=\"window.pwned=1\">\u{1B}[2J\u{2028}\u{202E}"
        _ = board.receive(
            topic: "motion/\(hostile)/status",
            payload: Self.status(hostile, refused: "<script>window.pwned=2</script>\u{9B}")
        )
        let rows = board.deviceIDs.compactMap { board.row(of: $0) }
        let text = ConsoleJSON.encode(rows)
        for raw in ["\u{1B}", "\u{2028}", "\u{202E}", "\u{9B}"] { #expect(!text.contains(raw)) }
        #expect(text.contains("\\u001b"))
        #expect(text.contains("\\u2028"))
        // The JSON parses back to the same text: escaped on the wire, shown as text by the page.
        let decoded = try JSONSerialization.jsonObject(with: Data(text.utf8)) as! [[String: Any]]
        #expect(decoded.first?["device"] as? String == hostile)
        #expect((decoded.first?["refused"] as? String)?.hasSuffix("<script>window.pwned=2</script>\u{9B}") == true)
    }
}
