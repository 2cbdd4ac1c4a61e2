import Foundation
import StreamCodegen

// `stream-codegen [--check] [ROOT]`: writes every file derived from Sources/StreamDeclarations under ROOT (default:
// the current directory), or with --check lists the stale ones and exits 1. scripts/codegen/streams/generate.sh
// runs it.
var arguments = Array(CommandLine.arguments.dropFirst())
let check = arguments.contains("--check")
arguments.removeAll { $0 == "--check" }
let root = URL(fileURLWithPath: arguments.first ?? FileManager.default.currentDirectoryPath)
do {
    if check {
        let stale = try GeneratedOutput.stale(StreamCodegen.outputs, root: root)
        for path in stale { print("stale: \(path)") }
        exit(stale.isEmpty ? 0 : 1)
    }
    let changed = try GeneratedOutput.write(StreamCodegen.outputs, root: root)
    for path in changed { print("wrote \(path)") }
    if changed.isEmpty { print("every generated file is up to date") }
} catch {
    FileHandle.standardError.write(Data("stream-codegen: \(error)\n".utf8))
    exit(1)
}
