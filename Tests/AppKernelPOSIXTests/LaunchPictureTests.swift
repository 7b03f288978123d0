import AppKernel
import AppKernelPOSIX
import AppKernelTesting
import ChildProcess
import Foundation
import Testing

/// The launch as a picture (issue 35): `APPKERNEL_TRACE=launch.html` writes one self-contained
/// page — inline SVG, no script — that draws the launch's steps on their lanes with durations,
/// failures in red with their message; a real browser (headless Chromium) renders it.
@MainActor
struct LaunchPictureTests {
    static let failureColour = "#d62728"

    /// A launch like the SDK's: the pipeline, BootLoader and SDK phases, a service, a gate, a
    /// failed service and a failed hook — on a TestClock, so the picture is the same every run.
    static func recordedLaunch() throws -> LaunchTimeline {
        let clock = TestClock()
        let app = Application(delegate: DefaultApplicationDelegate(), clock: clock)
        let timeline = LaunchTimeline()
        timeline.record(app)
        struct Broken: Error, CustomStringConvertible { var description: String { "the cache <file> is damaged & unread" } }
        let failing = app.hooks.after(.didFinishLaunching, label: "warm <b>cache</b>") { _ in throw Broken() }
        defer { failing.cancel() }
        try app.handle(.launch(LaunchOptions(), inBackground: false))
        clock.simulateWork(for: .milliseconds(2))
        let at = app.uptime
        for (offset, phase, length) in [(0, "config", 1), (1, "sdkInit", 3), (4, "passcode", 1), (5, "auth", 6), (11, "rootController", 2)] {
            timeline.add("sdk.\(phase)", category: "sdk", start: at + .milliseconds(offset), end: at + .milliseconds(offset + length))
        }
        app.reportActivity(Activity(name: "GeoService", category: "service", start: at + .milliseconds(1), end: at + .milliseconds(4)))
        app.reportActivity(Activity(name: "KeychainService", category: "service", start: at + .milliseconds(4), end: at + .milliseconds(5),
                                    failure: "no keychain on this host"))
        app.reportActivity(Activity(name: "sdk", category: "gate", start: at, end: at + .milliseconds(13)))
        clock.simulateWork(for: .milliseconds(13))
        timeline.finish(at: app.uptime)
        return timeline
    }

    @Test func thePageDrawsEveryStepWithoutScriptsAndFailuresInRed() throws {
        let timeline = try Self.recordedLaunch()
        let page = timeline.html(title: "Launch of <Demo>")
        #expect(page.hasPrefix("<!DOCTYPE html>"))
        #expect(page.contains("<svg xmlns=\"http://www.w3.org/2000/svg\""))
        for forbidden in ["<script", "src=", "href=", "@import", "url("] { #expect(!page.contains(forbidden), "\(forbidden)") }
        for phase in ["sdk.config", "sdk.sdkInit", "sdk.passcode", "sdk.auth", "sdk.rootController", "app.didFinishLaunching",
                      "bootLoader.setupWindow", "GeoService", "KeychainService"] {
            #expect(page.contains(">\(phase) "), "\(phase) is drawn with its duration")
        }
        #expect(page.contains("sdk.auth 6.000 ms"))
        #expect(page.contains("<text x=\"4\" y=\"") && page.contains(">gate</text>") && page.contains(">service</text>"), "a lane per kind")
        // The failed service: a red bar; the failed hook: a red mark with its message.
        #expect(page.contains("fill=\"\(Self.failureColour)\" stroke=\"#fff\" stroke-width=\"1\"/><text x=\"3\" y=\"13\" fill=\"#fff\">KeychainService"))
        #expect(page.contains("no keychain on this host"))
        #expect(page.contains("the cache &lt;file&gt; is damaged &amp; unread"), "the hook's failure, escaped")
        #expect(page.contains("warm &lt;b&gt;cache&lt;/b&gt;") && !page.contains("<b>cache</b>"), "names never become markup")
        #expect(page.contains("Launch of &lt;Demo&gt;"))
        #expect(page.contains("2 failed"))
    }

    @Test func aLaunchGatesWaitIsAnActivityOnTheTimeline() async throws {
        let clock = TestClock()
        let app = Application(delegate: DefaultApplicationDelegate(), clock: clock)
        let timeline = LaunchTimeline()
        timeline.record(app)
        let gate = app.addLaunchGate(named: "cache") { clock.simulateWork(for: .milliseconds(4)) }
        defer { gate.cancel() }
        try app.handle(.launch(LaunchOptions(), inBackground: false))
        await app.waitForLaunchGates()
        timeline.finish(at: app.uptime)
        let step = try #require(timeline.steps.first { $0.category == "gate" })
        #expect(step.name == "cache" && step.duration == .milliseconds(4) && step.failure == nil)
    }

    @Test func aFailedPhaseIsDrawnRedWithItsMessage() throws {
        struct NoWindow: Error, CustomStringConvertible { var description: String { "no display to show a window on" } }
        let clock = TestClock()
        let loader = BootLoader()
        _ = loader.engine.replace(.setupWindow, body: .sync { _ in clock.simulateWork(for: .milliseconds(1)); throw NoWindow() })
        let app = Application(delegate: DefaultApplicationDelegate(), bootLoader: loader, clock: clock)
        let timeline = LaunchTimeline()
        timeline.record(app)
        try app.handle(.launch(LaunchOptions(), inBackground: false))
        timeline.finish(at: app.uptime)
        let phase = try #require(timeline.steps.first { $0.name == "bootLoader.setupWindow" })
        #expect(phase.duration == .milliseconds(1))
        #expect(phase.failure?.contains("no display to show a window on") == true, "\(timeline.steps)")
        #expect(!timeline.steps.contains { $0.category == "failure" && $0.name == "bootLoader.setupWindow" }, "the mark became the bar's")
        #expect(timeline.html().contains("fill=\"\(Self.failureColour)\" stroke=\"#fff\" stroke-width=\"1\"/><text x=\"3\" y=\"13\" fill=\"#fff\">bootLoader.setupWindow"))
    }

    @Test func theProcessHostWritesThePageWhenThePathEndsInHTML() async throws {
        let page = String(decoding: try await ProcessHostInputsTests.demoTrace(named: "launch.html"), as: UTF8.self)
        #expect(page.contains("<title>Launch of ProcessHostDemo</title>"))
        for step in ["app.willFinishLaunching", "bootLoader.setupWindow", "bootLoader.startLauncher", "scene-1.sceneWillConnect"] {
            #expect(page.contains(">\(step) "), "\(step)")
        }
        #expect(!page.contains("traceEvents"), "the page, not the JSON")
    }

    /// Rendered by a real browser: the screenshot is a PNG of the window's size and far from blank
    /// (a white page of the same size, shot in the same run, compresses to a few KB), and the text
    /// the browser parsed names every phase.
    @Test(.enabled(if: Chromium.path != nil, "needs Debian's chromium (.ci/run installs it: apt-get install chromium)"))
    func headlessChromiumRendersThePage() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("launch-picture-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let page = folder.appendingPathComponent("launch.html"), blank = folder.appendingPathComponent("blank.html")
        try Data(try Self.recordedLaunch().html().utf8).write(to: page)
        try Data("<!DOCTYPE html><html><body></body></html>".utf8).write(to: blank)
        let drawn = try await Chromium.screenshot(page, in: folder, size: (1200, 700))
        let white = try await Chromium.screenshot(blank, in: folder, size: (1200, 700))
        let size = try #require(Chromium.pngSize(drawn), "the screenshot is a PNG")
        #expect(size.0 == 1200 && size.1 == 700)
        #expect(drawn.count > 5 * white.count, "drawn \(drawn.count) bytes, blank \(white.count)")
        let dom = try await Chromium.run(["--dump-dom", page.absoluteString], in: folder)
        for phase in ["sdk.config", "sdk.sdkInit", "sdk.passcode", "sdk.auth", "sdk.rootController", "bootLoader.setupWindow",
                      "bootLoader.startLauncher", "app.didFinishLaunching"] {
            #expect(dom.contains(phase), "\(phase) in the rendered page")
        }
    }
}

/// The README's pictures: both PNGs and the pages they are made from are committed, and the
/// README shows them at the top (`.ci/run` checks each PNG is what its page gives).
struct ReadmePictureTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    @Test func theReadmeShowsTheLaunchAndThePipelineAtTheTop() throws {
        let readme = try String(contentsOf: Self.root.appendingPathComponent("README.md"), encoding: .utf8)
        let top = readme.components(separatedBy: "**Contents.**")[0]
        for picture in ["launch", "pipeline"] {
            #expect(top.contains("<img src=\"Examples/Pictures/\(picture).png\""), "\(picture).png above the contents")
            let png = try Data(contentsOf: Self.root.appendingPathComponent("Examples/Pictures/\(picture).png"))
            #expect(Chromium.pngSize(png).map { $0.0 == 1200 } == true, "\(picture).png is a 1200-pixel-wide PNG")
            let page = try String(contentsOf: Self.root.appendingPathComponent("Examples/Pictures/\(picture).html"), encoding: .utf8)
            #expect(page.contains("<svg") && !page.contains("<script"))
        }
    }
}
