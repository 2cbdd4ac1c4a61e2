import AgentPorts
import Foundation
import Testing
import Yams

@testable import AgentConfig

/// The shipped config.yaml is the documentation; these tests keep it equal to the code.
@Suite struct SampleConfigurationTests {
    /// config.yaml at the package root, found from this file's path (Tests/AgentConfigTests/…).
    static let samplePath = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("config.yaml").path

    @Test func sampleDecodesToTheDefaults() throws {
        let configuration = try ConfigurationLoader.load(file: Self.samplePath, environment: [:])
        #expect(configuration == AgentConfiguration())
    }

    @Test func sampleWritesEveryKeyOfTheSchema() throws {
        let yaml = try String(contentsOfFile: Self.samplePath, encoding: .utf8)
        let root = try #require(try Yams.compose(yaml: yaml))
        var missing: [String] = []
        func visit(_ items: [ConfigurationSchema.Item], node: Node?, prefix: String) {
            for item in items {
                let path = prefix.isEmpty ? item.key : prefix + "." + item.key
                let child = node?.mapping?[item.key]
                if child == nil { missing.append(path) }
                if case .section(let children) = item.entry { visit(children, node: child, prefix: path) }
            }
        }
        visit(ConfigurationSchema.root, node: root, prefix: "")
        #expect(missing == [], "config.yaml must show every option uncommented")
    }

    @Test func sampleDocumentsTheEnvironmentOverrides() throws {
        let yaml = try String(contentsOfFile: Self.samplePath, encoding: .utf8)
        for override in EnvironmentOverride.all {
            #expect(yaml.contains(override.variable), "config.yaml should mention \(override.variable)")
        }
    }

    @Test func everyStreamHasDefaults() {
        for name in StreamName.allCases {
            #expect(StreamName.defaultSettings[name] != nil, "\(name) has no default settings")
        }
    }
}
