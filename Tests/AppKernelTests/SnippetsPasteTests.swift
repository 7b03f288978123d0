// Snippets as pasted (issue 35): the fast half of `.ci/snippets`. The script builds every Swift
// block of README.md and of the DocC articles in a new package outside the repository (a CI leg:
// minutes); these tests run its placing alone (`.ci/snippets --plan`, no build) and check that
// every block has a place and that each block's own imports name every module whose types it
// uses — what a pasted block lacks first.
import Foundation
import Testing
import TestSupport

@Suite struct SnippetsPasteTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// One line of the plan: where a block goes.
    struct Placed {
        var document: String
        var line: Int
        var kind: String
        var target: String
        var path: String
        var imports: [String]
    }

    static func plan() throws -> [Placed] {
        let process = Process()
        process.executableURL = root.appendingPathComponent(".ci/snippets")
        process.arguments = ["--plan"]
        let output = Pipe(), errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        let message = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw PlanFailed(message: ".ci/snippets --plan exited \(process.terminationStatus) (it needs python3): \(message)")
        }
        return String(decoding: data, as: UTF8.self).split(separator: "\n").map { row in
            let fields = row.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            let place = fields[0].split(separator: ":")
            return Placed(document: String(place[0]), line: Int(place[1]) ?? 0, kind: fields[1], target: fields[2], path: fields[3],
                          imports: fields[4].split(separator: ",").map(String.init))
        }
    }

    struct PlanFailed: Error, CustomStringConvertible { var message: String; var description: String { message } }

    /// The ```swift blocks of a document: the line of each fence and the block's lines.
    static func blocks(of document: String) throws -> [(line: Int, lines: [String])] {
        let lines = try String(contentsOf: root.appendingPathComponent(document), encoding: .utf8)
            .split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        var found: [(line: Int, lines: [String])] = []
        var index = 0
        while index < lines.count {
            if lines[index].trimmingCharacters(in: .whitespaces) == "```swift" {
                var end = index + 1
                while end < lines.count, lines[end].trimmingCharacters(in: .whitespaces) != "```" { end += 1 }
                found.append((index + 1, Array(lines[(index + 1) ..< min(end, lines.count)])))
                index = end
            }
            index += 1
        }
        return found
    }

    static func documents() throws -> [String] {
        var found = ["README.md"]
        let sources = root.appendingPathComponent("Sources")
        for module in try FileManager.default.contentsOfDirectory(atPath: sources.path).sorted() {
            let catalog = "Sources/\(module)/\(module).docc"
            for name in ((try? FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent(catalog).path)) ?? []).sorted()
            where name.hasSuffix(".md") {
                found.append("\(catalog)/\(name)")
            }
        }
        return found
    }

    /// The public types each library module declares at its top level, by name.
    static func publicTypes() throws -> [String: String] {
        var owner: [String: String] = [:]
        let declaration = try Regex(#"^(?:@\w+(?:\([^)]*\))? )*public (?:final )?(?:class|struct|enum|protocol|actor|typealias) (\w+)"#)
        let sources = root.appendingPathComponent("Sources")
        for module in try FileManager.default.contentsOfDirectory(atPath: sources.path) where module.hasPrefix("AppKernel") {
            let enumerator = FileManager.default.enumerator(at: sources.appendingPathComponent(module), includingPropertiesForKeys: nil)
            while let url = enumerator?.nextObject() as? URL {
                guard url.pathExtension == "swift" else { continue }
                for line in try String(contentsOf: url, encoding: .utf8).split(separator: "\n") {
                    if let match = try declaration.firstMatch(in: String(line)), let name = match.output[1].substring {
                        owner[String(name)] = module
                    }
                }
            }
        }
        return owner
    }

    /// What an import brings into a file: the module and what it re-exports (`@_exported import`).
    static func visibleModules(_ imports: [String]) throws -> Set<String> {
        var visible = Set(imports)
        for module in imports {
            let exports = root.appendingPathComponent("Sources/\(module)/Exports.swift")
            guard let text = try? String(contentsOf: exports, encoding: .utf8) else { continue }
            for line in text.split(separator: "\n") where line.hasPrefix("@_exported import ") {
                visible.insert(String(line.dropFirst("@_exported import ".count)))
            }
        }
        return visible
    }

    /// The names a block's code uses (comments and string literals left out).
    static func identifiers(in lines: [String]) throws -> Set<String> {
        let strings = try Regex(#""(?:\\.|[^"\\])*""#)
        let word = try Regex(#"#?[A-Za-z_]\w*"#)
        var names: Set<String> = []
        var inMultilineString = false
        for line in lines {
            if line.components(separatedBy: "\"\"\"").count % 2 == 0 { inMultilineString.toggle(); continue }
            if inMultilineString { continue }
            let code = line.replacing(strings, with: "\"\"").components(separatedBy: "//")[0]
            for match in code.matches(of: word) { names.insert(String(code[match.range])) }
        }
        return names
    }

    /// Every block of README and the articles has a place in the scratch package; none of README's
    /// is set aside as not pasteable yet.
    @Test func everyBlockHasAPlace() throws {
        let plan = try Self.plan()
        var expected: [String] = []
        for document in try Self.documents() {
            expected += try Self.blocks(of: document).map { "\(document):\($0.line)" }
        }
        #expect(plan.map { "\($0.document):\($0.line)" } == expected)
        #expect(plan.filter { $0.document == "README.md" && $0.kind == "not-yet" }.isEmpty, "every README block is pasteable")
        #expect(plan.filter { $0.document == "README.md" && $0.kind == "manifest" }.count == 1)
        // Blocks that share a file are one document's, each naming the file on its first line.
        for (path, blocks) in Dictionary(grouping: plan.filter { $0.path != "-" }, by: \.path) where blocks.count > 1 {
            #expect(Set(blocks.map(\.document)).count == 1 && blocks.allSatisfy { $0.kind == "source" || $0.kind == "test" }, "\(path)")
        }
    }

    /// Each block's own imports name the module of every AppKernel type it uses (directly or
    /// through a module that re-exports it), Foundation where it uses Foundation's names, and
    /// Testing where it is a test — a block pasted without them does not compile.
    @Test func eachBlockImportsWhatItUses() throws {
        let plan = try Self.plan()
        let owners = try Self.publicTypes()
        let foundation: Set<String> = ["URL", "Data", "Date", "UUID", "FileHandle", "FileManager", "ProcessInfo", "exit",
                                       "JSONSerialization", "JSONEncoder", "JSONDecoder", "NSError"]
        let testing: Set<String> = ["@Test", "#expect", "#require", "@Suite", "withKnownIssue"]
        var missing: [String] = []
        for document in try Self.documents() {
            let blocks = try Self.blocks(of: document)
            // A name the document's own blocks declare is the user's, not a library's.
            let declared = try Regex(#"(?:class|struct|enum|protocol|actor|func|typealias) (\w+)"#)
            var own: Set<String> = []
            for block in blocks { for line in block.lines { for match in line.matches(of: declared) {
                if let name = match.output[1].substring { own.insert(String(name)) }
            } } }
            for block in blocks {
                guard let placed = plan.first(where: { $0.document == document && $0.line == block.line }),
                      placed.kind != "manifest", placed.kind != "not-yet" else { continue }
                // Blocks that name one file are pasted into it one after the other: its imports are all of theirs.
                let visible = try Self.visibleModules(plan.filter { $0.path == placed.path }.flatMap(\.imports))
                var names = try Self.identifiers(in: block.lines)
                if block.lines.contains(where: { $0.contains("@Test") }) { names.insert("@Test") }
                for name in names.sorted() {
                    if let module = owners[name], !own.contains(name), !visible.contains(module) {
                        missing.append("\(document):\(block.line): uses \(name) but does not import \(module)")
                    } else if foundation.contains(name), !own.contains(name), !visible.contains("Foundation") {
                        missing.append("\(document):\(block.line): uses \(name) but does not import Foundation")
                    } else if testing.contains(name), !visible.contains("Testing") {
                        missing.append("\(document):\(block.line): uses \(name) but does not import Testing")
                    }
                }
            }
        }
        #expect(missing.isEmpty, "blocks that would not compile as pasted: \(missing)")
    }

    /// README's "Use it in your package" manifest (below, as written; `.ci/snippets` builds it)
    /// lists every product a forceios port imports — the AccountsApp example's imports, the
    /// embedded org in the test target (a stand-in ships in nothing) — and its test target the
    /// test kit; every product it names is one of this package's libraries.
    @Test func theReadmeManifestListsWhatAForceiosPortImports() throws {
        let manifest = """
        import PackageDescription

        let package = Package(
            name: "MyApp",
            platforms: [.macOS(.v15)],
            dependencies: [
                .package(url: "https://example.com/AppKernel.git", branch: "main"),
            ],
            targets: [
                .executableTarget(name: "MyApp", dependencies: [
                    .product(name: "AppKernel", package: "AppKernel"),
                    .product(name: "AppKernelSDK", package: "AppKernel"),
                    .product(name: "AppKernelAuth", package: "AppKernel"),
                    .product(name: "AppKernelREST", package: "AppKernel"),
                    .product(name: "AppKernelStore", package: "AppKernel"),
                    .product(name: "AppKernelSync", package: "AppKernel"),
                    .product(name: "AppKernelPOSIX", package: "AppKernel"),
                ]),
                .testTarget(name: "MyAppTests", dependencies: [
                    "MyApp",
                    .product(name: "AppKernelTesting", package: "AppKernel"),
                    .product(name: "AppKernelSDKTesting", package: "AppKernel"),
                    .product(name: "AppKernelEmbeddedOrg", package: "AppKernel"),
                ]),
            ]
        )
        """
        let halves = manifest.components(separatedBy: ".testTarget(")
        let app = Set(productsNamed(inManifest: halves[0])), tests = Set(productsNamed(inManifest: halves[1]))
        let ours = try String(contentsOf: Self.root.appendingPathComponent("Package.swift"), encoding: .utf8)
        #expect(productsNotLibraries(app.union(tests), packageManifest: ours) == [], "not library products")
        var ported: Set<String> = []
        let enumerator = FileManager.default.enumerator(at: Self.root.appendingPathComponent("Examples/AccountsApp"), includingPropertiesForKeys: nil)
        while let url = enumerator?.nextObject() as? URL {
            guard url.pathExtension == "swift" else { continue }
            for line in try String(contentsOf: url, encoding: .utf8).split(separator: "\n") where line.hasPrefix("import AppKernel") {
                ported.insert(String(line.dropFirst("import ".count)))
            }
        }
        let reExported = try Self.visibleModules(Array(app))
        #expect(ported.subtracting(reExported).subtracting(tests) == [], "the forceios port imports these, the manifest lacks them")
        #expect(!app.contains("AppKernelEmbeddedOrg") && tests.contains("AppKernelEmbeddedOrg"), "the stand-in org is the tests' only")
        #expect(tests.contains("AppKernelTesting"))
        #expect(ours.hasPrefix("// swift-tools-version:6.0"), "README's tools version is the package's")
        let readme = try String(contentsOf: Self.root.appendingPathComponent("README.md"), encoding: .utf8)
        #expect(readme.contains("```swift\n// swift-tools-version:6.0\n" + manifest + "\n```"), "the manifest above is README's, as written")
    }
}
