import Foundation
import Testing

@testable import FleetConsole

/// The page the binary serves is the page in Sources/FleetConsole/Assets (scripts/codegen/console/generate.sh),
/// and it shows device text as text only.
struct ConsoleAssetsTests {
    static let assets = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../Sources/FleetConsole/Assets").standardized

    @Test(arguments: [
        ("console.html", ConsoleAssets.page), ("console.css", ConsoleAssets.style),
        ("console.js", ConsoleAssets.script),
    ])
    func theCompiledAssetIsTheFile(_ name: String, _ compiled: String) throws {
        let file = try String(contentsOf: Self.assets.appendingPathComponent(name), encoding: .utf8)
        #expect(
            compiled + "\n" == file,
            "\(name) differs from ConsoleAssets.swift: run bash scripts/codegen/console/generate.sh"
        )
    }

    /// innerHTML, outerHTML, insertAdjacentHTML, document.write and eval would turn device text into markup or
    /// code; the script uses none of them (textContent only), and no inline script or handler (the CSP forbids
    /// them).
    @Test func theScriptNeverTurnsTextIntoMarkupOrCode() {
        for sink in ["innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(", "new Function"] {
            #expect(!ConsoleAssets.script.contains(sink), "console.js uses \(sink)")
        }
        #expect(!ConsoleAssets.page.contains("<script>"))
        #expect(!ConsoleAssets.page.contains(/\son[a-z]+\s*=/), "an inline event handler in console.html")
    }
}
