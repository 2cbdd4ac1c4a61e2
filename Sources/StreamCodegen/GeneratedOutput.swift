import Foundation

/// What the generator writes: a whole file, or a region between two marker lines of a file kept by hand.
package struct GeneratedOutput: Sendable, Equatable {
    package enum Target: Sendable, Equatable {
        case file
        /// The lines strictly between the line containing `BEGIN GENERATED <name>` and the next containing
        /// `END GENERATED <name>`.
        case region(String)
    }

    /// Relative to the repository's root.
    package let path: String
    package let target: Target
    package let contents: String

    package static func file(_ path: String, _ contents: String) -> GeneratedOutput {
        GeneratedOutput(path: path, target: .file, contents: contents)
    }

    package static func region(_ path: String, _ name: String, _ contents: String) -> GeneratedOutput {
        GeneratedOutput(path: path, target: .region(name), contents: contents)
    }

    package struct Problem: Error, CustomStringConvertible {
        package let description: String
    }

    /// `current` (the file as it is, nil when missing) with this output applied.
    package func applied(to current: String?) throws(Problem) -> String {
        switch target {
        case .file:
            return contents
        case .region(let name):
            guard let current else { throw Problem(description: "\(path) does not exist") }
            var lines = current.components(separatedBy: "\n")
            guard let begin = lines.firstIndex(where: { $0.contains("BEGIN GENERATED \(name)") }) else {
                throw Problem(description: "\(path) has no line with 'BEGIN GENERATED \(name)'")
            }
            guard let end = lines[(begin + 1)...].firstIndex(where: { $0.contains("END GENERATED \(name)") }) else {
                throw Problem(description: "\(path) has no line with 'END GENERATED \(name)' after its BEGIN")
            }
            var body = contents.components(separatedBy: "\n")
            if body.last == "" { body.removeLast() }
            lines.replaceSubrange((begin + 1)..<end, with: body)
            return lines.joined(separator: "\n")
        }
    }

    /// The files under `root` that differ from what the generator makes (their paths), after applying every
    /// output in order.
    package static func stale(_ outputs: [GeneratedOutput], root: URL) throws -> [String] {
        var expected: [String: String] = [:]
        var order: [String] = []
        for output in outputs {
            let url = root.appendingPathComponent(output.path)
            let current = expected[output.path] ?? (try? String(contentsOf: url, encoding: .utf8))
            if expected[output.path] == nil { order.append(output.path) }
            expected[output.path] = try output.applied(to: current)
        }
        return order.filter { path in
            (try? String(contentsOf: root.appendingPathComponent(path), encoding: .utf8)) != expected[path]
        }
    }

    /// Writes every output under `root`; returns the paths it changed.
    @discardableResult
    package static func write(_ outputs: [GeneratedOutput], root: URL) throws -> [String] {
        var expected: [String: String] = [:]
        var order: [String] = []
        for output in outputs {
            let url = root.appendingPathComponent(output.path)
            let current = expected[output.path] ?? (try? String(contentsOf: url, encoding: .utf8))
            if expected[output.path] == nil { order.append(output.path) }
            expected[output.path] = try output.applied(to: current)
        }
        var changed: [String] = []
        for path in order {
            let url = root.appendingPathComponent(path)
            guard (try? String(contentsOf: url, encoding: .utf8)) != expected[path] else { continue }
            try FileManager.default.createDirectory(
                at: url.deletingLastPathComponent(),
                withIntermediateDirectories: true
            )
            try expected[path]!.write(to: url, atomically: true, encoding: .utf8)
            changed.append(path)
        }
        return changed
    }
}
