// The README's snippets, run as written (with the AppDelegate they assume).
import Foundation
import Testing
import AppKernel
import AppKernelTesting

@MainActor
private final class AppDelegate: ApplicationDelegate {
    func application(_ application: Application, didReceiveRemoteNotification userInfo: [String: JSONValue],
                     fetchCompletionHandler completionHandler: @escaping @MainActor @Sendable (BackgroundFetchResult) -> Void) {
        completionHandler(.newData)
    }
}

@MainActor @Test func readmeFirstScreenExample() async throws {
    let clock = TestClock()
    let host = SimulatedHost(clock: clock)
    let app = try host.launch(delegate: DefaultApplicationDelegate())   // willFinish → didFinish → scene connects
    try host.moveToBackground()                              // resign → enter background
    let upload = app.beginBackgroundTask(name: "upload") { /* out of time */ }
    await clock.advance(by: .seconds(30))                    // the expiration handler runs
    app.endBackgroundTask(upload)                            // app.state == .suspended
    try host.terminate()
    #expect(app.state == .terminated)
    // No scene delegate here; a suspended app is ended without willTerminate, as in UIKit.
    #expect(host.trace.take() == ["app.willFinishLaunching", "app.didFinishLaunching", "app.configurationForConnecting(scene-1)",
                                  "system.backgroundTaskExpired(upload)", "system.didSuspend"])
}

/// The README's "Testing your app" test, run against the README's own minimal app ("Use it in
/// your package"), nested so its names stay the README's.
@MainActor
struct ReadmeTestingYourApp {
    @MainActor
    final class AppDelegate: ApplicationDelegate {
        func application(_ application: Application, didFinishLaunchingWithOptions options: LaunchOptions) -> Bool {
            true
        }

        func application(_ application: Application, configurationForConnecting session: SceneSession,
                         options: SceneConnectionOptions) -> SceneConfiguration {
            SceneConfiguration(name: "Default Configuration") { SceneDelegate() }
        }
    }

    @MainActor
    final class SceneDelegate: AppKernel.SceneDelegate {
        var window: Window?

        func scene(_ scene: Scene, willConnectTo session: SceneSession, options: SceneConnectionOptions) {
            window = Window(windowScene: scene)
            window?.rootController = PlaceholderController(message: "Hello")
            window?.makeKeyAndVisible()
        }
    }

    @Test(.appKernel) @MainActor
    func launchShowsHelloAndTheBackgroundSuspends() async throws {
        let test = AppKernelTest.current                          // this test's host, clock and scope
        let app = try test.host.launch(delegate: AppDelegate())
        try await test.host.launchFinished()
        let window = try #require(app.connectedScenes.first?.keyWindow)
        #expect((window.rootController as? PlaceholderController)?.message == "Hello")
        try test.host.moveToBackground()
        await test.clock.advance(by: .seconds(5))                 // the grace period
        #expect(app.state == .suspended)
        #expect(test.host.trace.take() == ["app.willFinishLaunching", "app.didFinishLaunching",
                                           "app.configurationForConnecting(scene-1)", "scene-1.willConnect",
                                           "scene-1.willEnterForeground", "scene-1.didBecomeActive",
                                           "scene-1.willResignActive", "scene-1.didEnterBackground",
                                           "system.didSuspend"])
    }
}

/// A background launch for a silent push, with the file's delegate that answers `.newData` (an
/// earlier README example, kept as a test).
@MainActor @Test func backgroundLaunchForSilentPushSuspendsAfterAnswering() async throws {
    let clock = TestClock()
    let host = SimulatedHost(clock: clock)
    let app = try host.launch(delegate: AppDelegate(),
                              options: LaunchOptions(remoteNotification: ["aps": ["content-available": 1]]),
                              inBackground: true)
    #expect(await app.launchCompletion?.value() == .newData)
    await clock.advance(by: .seconds(5))                  // the grace period
    #expect(app.state == .suspended)
    #expect(host.trace.take() == ["app.willFinishLaunching", "app.didFinishLaunching",
                                  "app.didReceiveRemoteNotification({\"aps\":{\"content-available\":1}})",
                                  "system.didSuspend"])
}

// The README's hooks block, as written (its AppDelegate is this file's).
@MainActor final class Framework: FrameworkInterface {}       // the app's DTFrameworkInterface category
@MainActor final class Flags {
    var loaded = false
    func load() throws { loaded = true }
}

@MainActor @Test func aHookSeesTheURLBeforeEveryoneElse() throws {
    let host = SimulatedHost()
    let flags = Flags()
    let loader = BootLoader()                                    // setupWindow … startLauncher
    loader.addPhase("loadFlags", before: BootLoader.showWindowPhase) { app in try flags.load() }
    let app = try host.launch(delegate: AppDelegate(), interface: Framework(), bootLoader: loader)
    var hooks: [ListenerToken] = []                              // a hook lives as long as its token
    app.hooks.handle(.openURL) { request in
        request.url = URL(string: request.url.absoluteString.replacingOccurrences(of: "/v1/", with: "/v2/"))!
        return .continue                                         // everything after sees the new URL
    }.store(in: &hooks)
    app.hookErrorHandler = { error in print(error) }           // names the hook point and the hook
    var opened: [String] = []
    let token = app.addListener(for: .openURL) { opened.append($0.url.absoluteString) }
    try host.open(URL(string: "myapp://api/v1/items")!)
    #expect(flags.loaded)
    #expect(loader.phaseNames.firstIndex(of: "loadFlags")! < loader.phaseNames.firstIndex(of: "showWindow")!)
    #expect(opened == ["myapp://api/v2/items"])
    #expect(app.hookErrors.isEmpty)
    token.cancel()
}

/// Every Swift block of the README, DESIGN, Benchmarks/README and the DocC articles appears, line for line
/// (indentation aside), in a test or an example that compiles it — with its imports at the top
/// of that file (an `@_spi` import counts) — so the docs cannot drift from code that builds.
/// A block's first line when it says where the block is pasted (`// Sources/MyApp/…swift`,
/// `// Tests/…`, `// swift-tools-version:…`; `.ci/snippets`' rule) is not looked for, nor an
/// import of the user's own targets (`@testable import MyApp`, every `MyApp…`): `.ci/snippets` builds those.
/// A block not covered yet would be listed by file and first line, with the reason; the list is
/// empty and must stay so.
@Test func everyDocumentedSwiftBlockIsCompiledVerbatim() throws {
    let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    let notYetCovered: [String: String] = [:]
    func lines(_ text: some StringProtocol) -> [String] {
        text.split(separator: "\n", omittingEmptySubsequences: false).map { line in
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            // `@_spi(Testing) import M` compiles what `import M` does, and more.
            if trimmed.hasPrefix("@_spi("), let close = trimmed.firstIndex(of: ")") {
                return trimmed[trimmed.index(after: close)...].trimmingCharacters(in: .whitespaces)
            }
            if trimmed.hasPrefix("@testable import ") { return String(trimmed.dropFirst("@testable ".count)) }
            return trimmed
        }.filter { !$0.isEmpty }
    }
    func files(under folder: String, where keep: (URL) -> Bool) -> [URL] {
        let enumerator = FileManager.default.enumerator(at: root.appendingPathComponent(folder), includingPropertiesForKeys: nil)
        var found: [URL] = []
        while let url = enumerator?.nextObject() as? URL { if keep(url) { found.append(url) } }
        return found
    }
    var sources: [[String]] = []
    for url in files(under: "Tests", where: { $0.pathExtension == "swift" }) + files(under: "Examples", where: { $0.pathExtension == "swift" }) {
        sources.append(lines(try String(contentsOf: url, encoding: .utf8)))
    }
    let documents = ["README.md", "DESIGN.md", "Benchmarks/README.md"].map { root.appendingPathComponent($0) }
        + files(under: "Sources", where: { $0.pathExtension == "md" && $0.deletingLastPathComponent().pathExtension == "docc" })
    var uncovered: [String] = []
    var blockCount = 0
    for document in documents {
        let text = try String(contentsOf: document, encoding: .utf8)
        let name = document.path.replacingOccurrences(of: root.path + "/", with: "")
        for block in text.components(separatedBy: "```swift\n").dropFirst().map({ $0.components(separatedBy: "```")[0] }) {
            blockCount += 1
            var blockLines = lines(block)
            if let first = blockLines.first, first.hasPrefix("// swift-tools-version:") || first.hasPrefix("// Sources/") || first.hasPrefix("// Tests/") {
                blockLines.removeFirst()
            }
            let imports = blockLines.filter { $0.hasPrefix("import ") && !$0.hasPrefix("import MyApp") }   // the user's own targets
            let body = blockLines.filter { !$0.hasPrefix("import ") }
            let covered = sources.contains { source in
                guard imports.allSatisfy(source.contains), body.count <= source.count else { return false }
                return (0...(source.count - body.count)).contains { Array(source[$0 ..< $0 + body.count]) == body }
            }
            if !covered { uncovered.append("\(name): \(blockLines.first ?? "")") }
        }
    }
    #expect(blockCount >= 14)
    #expect(Set(uncovered) == Set(notYetCovered.keys), "documented blocks not found verbatim in Tests/ or Examples/: \(uncovered)")
}

/// The README's contents list names every section, and it links every DocC article (issue 35: a
/// newcomer finds each from the first screen).
@Test func theReadmeLinksEverySectionAndEveryArticle() throws {
    let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    let readme = try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)
    let contents = try #require(readme.split(separator: "\n").first { $0.hasPrefix("**Contents.**") })
    for heading in readme.split(separator: "\n").filter({ $0.hasPrefix("## ") }).map({ $0.dropFirst(3) }) {
        #expect(contents.contains("[\(heading)](#"), "the contents list lacks '\(heading)'")
    }
    let sources = root.appendingPathComponent("Sources")
    for module in try FileManager.default.contentsOfDirectory(atPath: sources.path) {
        let catalog = sources.appendingPathComponent(module).appendingPathComponent(module + ".docc")
        for article in (try? FileManager.default.contentsOfDirectory(atPath: catalog.path)) ?? []
        where article.hasSuffix(".md") && article != module + ".md" {
            #expect(readme.contains("(Sources/\(module)/\(module).docc/\(article))"), "README does not link \(module)/\(article)")
        }
    }
}

/// The AppKernel catalog's "Driving the life cycle" article, as written.
@MainActor @Test func theAppIsSuspendedAfterTheGracePeriodAndComesBack() async throws {
    let clock = TestClock()
    let host = SimulatedHost(clock: clock)
    let app = try host.launch(delegate: DefaultApplicationDelegate())
    try host.moveToBackground()
    await clock.advance(by: .seconds(5))               // the grace period: the app is suspended
    #expect(app.state == .suspended)
    try host.moveToForeground()
    #expect(app.state == .active)
}
