import Foundation

/// The slices of public recordings the tests read, committed under Tests/Fixtures/data with their licences and
/// provenance (its README.md), so a clone of the repository alone passes its tests.
package enum DataFixtures {
    /// The data folder: `Tests/Fixtures/data`.
    package static var folder: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/data")
    }

    /// A file under the data folder, e.g. `broad/02_undisturbed_slow_rotation_B_0-80s.csv`.
    package static func url(_ relativePath: String) -> URL { folder.appendingPathComponent(relativePath) }

    /// The text of a file under the data folder; the error names the file and the README that lists them.
    package static func text(_ relativePath: String) throws -> String {
        let url = url(relativePath)
        do {
            return try String(contentsOf: url, encoding: .utf8)
        } catch {
            throw FixtureMissing(
                description:
                    "cannot read \(url.path): \(error.localizedDescription) — the test data is committed under Tests/Fixtures/data (its README.md lists every file); restore it with git checkout"
            )
        }
    }

    package struct FixtureMissing: Error, CustomStringConvertible {
        package var description: String
    }
}
