// DESIGN.md stays a page a newcomer reads in ten minutes: short, with its "where a change goes"
// table and its one table of deliberate differences; the porting table lives once, in DocC; the
// performance notes live in Benchmarks/README.md; and every file DESIGN.md links to exists.
import Foundation
import Testing

@Suite struct DesignDocument {
    let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    func text(_ path: String) throws -> String {
        try String(contentsOf: root.appendingPathComponent(path), encoding: .utf8)
    }

    /// The rows of the first table under `heading` (a line as written, e.g. "## Where a change
    /// goes"), header and separator excluded, each split into its trimmed cells.
    func tableRows(under heading: String, in document: String) -> [[String]] {
        let lines = document.components(separatedBy: "\n")
        guard let start = lines.firstIndex(of: heading) else { return [] }
        let table = lines[(start + 1)...].drop { !$0.hasPrefix("|") }.prefix { $0.hasPrefix("|") }
        return table.dropFirst(2).map { row in
            row.split(separator: "|", omittingEmptySubsequences: false).dropFirst().dropLast()
                .map { $0.trimmingCharacters(in: .whitespaces) }
        }
    }

    @Test func designIsAtMostThreeHundredLines() throws {
        let lines = try text("DESIGN.md").split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.count <= 300, "DESIGN.md has \(lines.count) lines; per-module reference belongs in the DocC catalogs")
    }

    @Test func designSaysWhereEachKindOfChangeGoes() throws {
        let rows = tableRows(under: "## Where a change goes", in: try text("DESIGN.md"))
        let kinds = ["event", "hook point", "launch phase", "config key", "store feature", "sync target", "REST endpoint", "signal"]
        for kind in kinds {
            #expect(rows.contains { $0.first?.hasSuffix(kind) == true && $0.count == 3 && !$0[1].isEmpty },
                    "no row of \"Where a change goes\" says where \(kind) goes")
        }
    }

    @Test func deliberateDifferencesAreOneTableWithAReasonPerRow() throws {
        let design = try text("DESIGN.md")
        let rows = tableRows(under: "## Deliberate differences", in: design)
        #expect(rows.count >= 54, "a deliberate difference was dropped: \(rows.count) rows")
        for row in rows {
            #expect(row.count == 4 && row.allSatisfy { !$0.isEmpty }, "a row needs what, the anchor, ours and why: \(row)")
        }
        #expect(design.components(separatedBy: "\n| what | the anchor | ours | why |").count == 2, "one table of differences")
    }

    @Test func everyFileDesignLinksExists() throws {
        let design = try text("DESIGN.md")
        let links = design.components(separatedBy: "](").dropFirst().compactMap { $0.split(separator: ")").first.map(String.init) }
        #expect(links.count >= 4)
        for link in links where !link.contains("://") {
            let path = String(link.split(separator: "#").first ?? "")
            #expect(FileManager.default.fileExists(atPath: root.appendingPathComponent(path).path), "DESIGN.md links a missing file: \(link)")
        }
        #expect(design.contains("(Sources/AppKernel/AppKernel.docc/PortingNames.md)"), "DESIGN.md links the porting table")
        #expect(design.contains("(Benchmarks/README.md)"), "DESIGN.md links the performance notes")
    }

    /// A porting-table row (UIKit's, mPaaS's and the Mobile SDK's names) is written in one
    /// document only: the AppKernel catalog's "Porting names" article.
    @Test func thePortingTableLivesOnceInDocC() throws {
        let enumerator = FileManager.default.enumerator(at: root.appendingPathComponent("Sources"), includingPropertiesForKeys: nil)
        var documents = ["README.md", "DESIGN.md"]
        while let url = enumerator?.nextObject() as? URL {
            if url.pathExtension == "md" && url.deletingLastPathComponent().pathExtension == "docc" {
                documents.append(url.path.replacingOccurrences(of: root.path + "/", with: ""))
            }
        }
        let rows = ["| `UIApplicationShortcutItem` |", "| `UIScene.ActivationState` |", "| `DTMicroApplication` / `DTMicroApplicationDelegate` |",
                    "| `SFSmartStore` |", "| `SFMobileSyncSyncManager`", "| `SFUserAccount` |", "| `sd_notify` READY / STATUS / WATCHDOG / STOPPING |"]
        for row in rows {
            let holders = try documents.filter { try text($0).contains(row) }
            #expect(holders == ["Sources/AppKernel/AppKernel.docc/PortingNames.md"], "\(row) is written in \(holders)")
        }
    }

    @Test func benchmarksReadmeHoldsThePerformanceNotes() throws {
        let readme = try text("Benchmarks/README.md")
        for part in ["swift run -c release AppKernelBenchmarks", "## What each section measures", "## How the hot path stays cheap",
                     "**The listener table**", "**Hooks per event.**", "(ServicePeers/README.md)"] {
            #expect(readme.contains(part), "Benchmarks/README.md lacks \(part)")
        }
        #expect(try text("DESIGN.md").firstMatch(of: /[0-9] ?ns\b/) == nil, "figures in nanoseconds belong in Benchmarks/README.md")
    }
}
