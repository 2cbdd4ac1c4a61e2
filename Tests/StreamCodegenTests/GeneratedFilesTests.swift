import Foundation
import StreamCodegen
import StreamDeclarations
import Testing

/// The files derived from the stream declarations are committed; these tests fail while one differs from what
/// the declarations make, and say how to regenerate them.
@Suite struct GeneratedFilesTests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    @Test func everyGeneratedFileIsUpToDate() throws {
        let stale = try GeneratedOutput.stale(StreamCodegen.outputs, root: Self.repository)
        #expect(
            stale.isEmpty,
            "stale generated files: \(stale.joined(separator: ", ")) — run bash scripts/codegen/streams/generate.sh and commit the result"
        )
    }

    @Test func aRegionIsReplacedBetweenItsMarkersOnly() throws {
        let output = GeneratedOutput.region("x", "names", "b\nc\n")
        let text = "a\n# BEGIN GENERATED names\nold\n# END GENERATED names\nd\n"
        #expect(try output.applied(to: text) == "a\n# BEGIN GENERATED names\nb\nc\n# END GENERATED names\nd\n")
        #expect(throws: GeneratedOutput.Problem.self) { try output.applied(to: "a\nb\n") }
    }

    @Test func namesAndTopicsAreUnique() {
        let table = StreamDeclaration.table
        #expect(Set(table.map(\.name)).count == table.count)
        #expect(Set(table.map(\.swiftName)).count == table.count)
        let topics = StreamDeclaration.allTopics.map(\.topic)
        #expect(Set(topics.map(\.path)).count == topics.count)
        #expect(Set(topics.map(\.kind)).count == topics.count)
        #expect(Set(topics.map(\.payload.swiftCase)).count == topics.count)
        #expect(Set(topics.map(\.payload.codec)).count == topics.count)
        for stream in table {
            #expect(stream.topics.first?.path == stream.name, "a stream's own topic is its name")
            #expect(stream.topics.dropFirst().allSatisfy { $0.path.hasPrefix(stream.name + "/") })
            for entity in stream.homeAssistant { #expect(stream.topics.indices.contains(entity.topic)) }
        }
    }

    /// Every field the decoder must read back is named by its value's initializer or assigned after it: a field
    /// declared but never decoded would be lost between the agent and its subscribers.
    @Test func everyReadableFieldIsDecoded() {
        func readable(_ fields: [FieldDeclaration]) -> [FieldDeclaration] {
            fields.flatMap { f -> [FieldDeclaration] in
                if case .group(let children, nil, _) = f.kind { return readable(children) }
                return f.derived ? [] : [f]
            }
        }
        for (_, topic) in StreamDeclaration.allTopics {
            guard case .fields(let fields) = topic.payload.shape, let initializer = topic.payload.initializer else {
                continue
            }
            for f in readable(fields) where !initializer.contains(f.swift) {
                #expect(f.presence == .optional, "\(topic.path).\(f.name) is neither initialized nor optional")
            }
        }
    }
}
