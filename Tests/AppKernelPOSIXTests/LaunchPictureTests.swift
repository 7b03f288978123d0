import AppKernel
import AppKernelModules
import AppKernelPOSIX
import AppKernelTesting
import ChildProcess
import ScriptedLaunch
import Foundation
import Testing
import TestSupport

/// A forceios-like launch under a virtual clock (ScriptedLaunch, which README's picture draws
/// too): a BootLoader with services, an SDK-like phase engine behind a launch gate, a hook on an
/// event and one on a phase, and one failing service.
enum RecordedLaunch {
    static let bootLoaderPhases = ScriptedLaunch.bootLoaderPhases
    static let sdkPhases = ["config", "sdkInit", "passcode", "auth", "rootController"]
    static let failure = "the analytics endpoint refused the key"
    static let boldHook = "warm <b>cache</b>"

    /// Runs the launch to its end (every gate open) and returns its timeline.
    @MainActor
    static func record() async throws -> LaunchTimeline {
        try await ScriptedLaunch(
            services: [.init("keychain", milliseconds: 30), .init("network", milliseconds: 50),
                       .init("analytics", milliseconds: 20, failure: failure)],
            hooks: [.init(.didFinishLaunching, boldHook, milliseconds: 4), .init(.phase("setupWindow"), "theme", milliseconds: 6)],
            sdkPhases: sdkPhases.map { ($0, 15) }
        ).record()
    }
}

@MainActor
struct LaunchPictureTests {
    @Test func theRecordingHoldsPhasesHooksServicesGatesAndTheFailure() async throws {
        let steps = try await RecordedLaunch.record().steps
        let names = Set(steps.map(\.name))
        for phase in RecordedLaunch.bootLoaderPhases { #expect(names.contains("bootLoader.\(phase)"), "\(phase)") }
        for phase in RecordedLaunch.sdkPhases { #expect(names.contains("sdk.\(phase)"), "\(phase)") }
        #expect(steps.contains { $0.category == "hook" && $0.name == "didFinishLaunching.before:\(RecordedLaunch.boldHook)" })
        #expect(steps.contains { $0.category == "hook" && $0.name == "setupWindow.before:theme" && $0.duration == .milliseconds(6) })
        #expect(steps.contains { $0.category == "service" && $0.name == "network" && $0.duration == .milliseconds(50) && $0.failure == nil })
        #expect(steps.contains { $0.category == "gate" && $0.name == "sdk launch" && $0.duration == .milliseconds(75) })
        let failed = steps.filter { $0.failure != nil }
        #expect(failed.map(\.name) == ["analytics"])
        #expect(failed.first?.failure?.contains(RecordedLaunch.failure) == true)
    }

    @Test func theHTMLIsOnePictureWithoutScriptsThatNamesEveryPhaseAndTheFailure() async throws {
        let html = try await RecordedLaunch.record().html(title: "Launch <of> test")
        #expect(html.hasPrefix("<!DOCTYPE html>"))
        #expect(html.contains("<svg"))
        #expect(!html.lowercased().contains("<script"))
        #expect(!html.contains("http://") || html.components(separatedBy: "http://").count == 2, "only the SVG namespace names a URL")
        #expect(!html.contains("https://") && !html.contains("url("), "nothing fetched from anywhere")
        for phase in RecordedLaunch.bootLoaderPhases + RecordedLaunch.sdkPhases { #expect(html.contains(".\(phase) · "), "\(phase)") }
        #expect(html.contains(RecordedLaunch.failure))
        // The failed bar is drawn in the failure colour, and the legend says what that colour is.
        #expect(html.contains("fill=\"#d62728\""))
        #expect(html.contains("#d62728\"></span>failed, with its message"))
        #expect(html.contains(" ms</text>"), "a time axis in milliseconds")
    }

    @Test func namesFromUserCodeAreEscaped() async throws {
        let html = try await RecordedLaunch.record().html(title: "Launch <of> test")
        #expect(!html.contains("<b>cache</b>"))
        #expect(html.contains("warm &lt;b&gt;cache&lt;/b&gt;"))
        #expect(html.contains("<title>Launch &lt;of&gt; test</title>"))
        let timeline = LaunchTimeline()
        timeline.add("a \"quoted\" & 'single' <step>", category: "<x>", start: .zero, end: .milliseconds(1), failure: "<script>alert(1)</script>")
        let page = timeline.html(title: "t")
        #expect(!page.contains("<script"))
        #expect(!page.contains("<step>") && !page.contains("<x>"))
        #expect(page.contains("a &quot;quoted&quot; &amp; &#39;single&#39; &lt;step&gt;"))
    }

    @Test func anEmptyTimelineStillMakesAPage() {
        let page = LaunchTimeline().html(title: "nothing yet")
        #expect(page.hasPrefix("<!DOCTYPE html>") && page.contains("<svg") && page.contains("0 steps"))
        #expect(page.hasSuffix("</body></html>\n"))
    }

    @Test func theChromeTraceCarriesTheFailure() async throws {
        let data = try await RecordedLaunch.record().chromeTraceJSON(processID: 1)
        let document = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let events = try #require(document["traceEvents"] as? [[String: Any]])
        let failed = events.filter { $0["args"] != nil }
        #expect(failed.compactMap { $0["name"] as? String } == ["analytics"])
        #expect(chromeTraceNestingViolations(events) == [])
    }

    @Test func aTracePathEndingInHTMLGetsThePicture() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("launch-html-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("launch.html")
        let child = try ChildProcess(executable: "ProcessHostDemo", environment: ["APPKERNEL_TRACE": file.path])
        #expect(await child.waitForLine("scene.didBecomeActive"))
        #expect(await child.waitUntil { _, _ in FileManager.default.fileExists(atPath: file.path) })
        child.send(SIGTERM)
        #expect(await child.waitForExit() == 0)
        let html = try String(contentsOf: file, encoding: .utf8)
        #expect(html.hasPrefix("<!DOCTYPE html>"))
        #expect(html.contains("<svg"))
        #expect(!html.lowercased().contains("<script"))
        for step in ["app.didFinishLaunching", "bootLoader.setupWindow", "bootLoader.startLauncher"] { #expect(html.contains(step), "\(step)") }
    }
}
