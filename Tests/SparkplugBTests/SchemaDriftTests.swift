import Crypto
import Foundation
import Testing

@testable import SparkplugB

/// The committed Swift is what scripts/codegen/sparkplug/generate.sh makes of sparkplug_b.proto: the script
/// records both files' SHA-256, and these tests recompute them without protoc. An edited .proto without a
/// regeneration, or generated code edited by hand, fails here with the command that fixes it.
@Suite struct SchemaDriftTests {
    private static let schema = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Sources/SparkplugB/Schema")

    private func sha256(_ name: String) throws -> String {
        let data = try Data(contentsOf: Self.schema.appendingPathComponent(name))
        return SHA256.hash(data: data).map { String(format: "%02x", $0) }.joined()
    }

    @Test func theProtoIsTheOneTheSwiftWasGeneratedFrom() throws {
        #expect(
            try sha256("sparkplug_b.proto") == SparkplugSchemaDigest.proto,
            "sparkplug_b.proto changed since the Swift was generated: run bash scripts/codegen/sparkplug/generate.sh"
        )
    }

    @Test func theGeneratedSwiftIsUnedited() throws {
        #expect(
            try sha256("sparkplug_b.pb.swift") == SparkplugSchemaDigest.generatedSwift,
            "sparkplug_b.pb.swift differs from what the generator wrote: run bash scripts/codegen/sparkplug/generate.sh"
        )
    }

    @Test func theGeneratorIsThePackagesSwiftProtobuf() {
        #expect(SparkplugSchemaDigest.generator.hasPrefix("protoc-gen-swift 1.39.0"))
    }
}
