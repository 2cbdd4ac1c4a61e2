import AgentControl
import AgentPipeline
import Foundation
import MotionWire
import Testing

/// The command table: every command documented, its examples accepted by the agent's own parser, and
/// nothing parsed that the table does not describe.
@Suite struct ControlCommandDescriptorTests {
    private func request(_ command: String, _ example: String) throws -> Result<ControlRequest, ControlFailure> {
        let pairs = example.split(separator: " ").map(String.init)
        let object = try ControlCommandDescriptor.object(id: "x", command: command, pairs: pairs, timestamp: nil)
        return ControlRequest.parse(StrictJSON.Value.object(object).encoded())
    }

    @Test func everyCommandHasAUniqueNameHelpAndExamples() {
        let names = ControlCommandDescriptor.names
        #expect(Set(names).count == names.count, "duplicate names: \(names)")
        #expect(names.count == 18)
        for d in ControlCommandDescriptor.table {
            #expect(!d.summary.isEmpty && !d.arguments.isEmpty && !d.examples.isEmpty, "\(d.name)")
            #expect(ControlCommandDescriptor.helpText.contains("  \(d.name) — \(d.summary)"), "\(d.name)")
        }
    }

    @Test(arguments: ControlCommandDescriptor.table.map(\.name))
    func everyExampleParsesToItsOwnCommand(name: String) throws {
        let d = try #require(ControlCommandDescriptor.named(name))
        for example in d.examples {
            let parsed = try request(name, example).get()
            #expect(parsed.name == name)
            #expect(parsed.id == "x")
        }
    }

    @Test func commandsWithArgumentsRefuseNoneAndQuoteTheirHelp() throws {
        // A command whose examples include the bare command (set-reference-attitude: capture the current
        // attitude) takes its arguments optionally; everyExampleParsesToItsOwnCommand checks that it parses.
        for d in ControlCommandDescriptor.table where d.arguments != "no arguments" && !d.examples.contains("") {
            guard case .failure(let f) = try request(d.name, "") else {
                Issue.record("\(d.name) accepted no arguments")
                continue
            }
            #expect(ControlReply.code(for: f.kind) == 400, "\(d.name): \(f.message)")
        }
        guard case .failure(let f) = try request("ping", "stream=gyroscope") else {
            Issue.record("ping accepted an argument")
            return
        }
        #expect(f.message.contains("accepted: no arguments"))
    }

    @Test func keyValuePairsBecomeJSONTypesAsTheCLIDocumentsThem() throws {
        let object = try ControlCommandDescriptor.object(
            id: "1",
            command: "set-rate",
            pairs: ["stream=gyroscope", "rate_hz=50", "retain=true", "from=2026-11-21T08:00:00Z"],
            timestamp: 5
        )
        let value = StrictJSON.Value.object(object)
        #expect(value["stream"] == .string("gyroscope"))
        #expect(value["rate_hz"] == .number("50"))
        #expect(value["retain"] == .bool(true))
        #expect(value["from"] == .string("2026-11-21T08:00:00Z"))
        #expect(value["timestamp"]?.double == 5)
        // What ctl sends is what the strict parser reads back.
        #expect(try StrictJSON.parse(value.encoded(), limits: .command) == value)
        #expect(throws: ControlFailure.self) {
            try ControlCommandDescriptor.object(id: "1", command: "start", pairs: ["gyroscope"], timestamp: nil)
        }
    }

    @Test func anUnknownCommandIsRefusedWithTheTablesNames() {
        guard case .failure(let f) = ControlRequest.parse(Array(#"{"id":"1","command":"reboot"}"#.utf8)) else {
            Issue.record("reboot accepted")
            return
        }
        #expect(f.kind == .unknown)
        #expect(f.message.contains(ControlCommandDescriptor.names.joined(separator: ", ")))
    }
}
