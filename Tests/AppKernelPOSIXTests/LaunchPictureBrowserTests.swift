import AppKernelPOSIX
import ChildProcess
import Foundation
import Testing
import TestSupport

/// Debian's `chromium`, when it is on `PATH` (`.ci/run` installs it when missing).
private let chromium: String? = (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":")
    .map { "\($0)/chromium" }.first { FileManager.default.isExecutableFile(atPath: $0) }

/// The launch picture (`APPKERNEL_TRACE=launch.html`) rendered by a real browser: headless
/// Chromium screenshots it and dumps its DOM. Chromium's profile, `HOME` and XDG folders are in
/// the test's temporary folder, which the test removes: nothing is left in the user's home.
@MainActor
struct LaunchPictureBrowserTests {
    /// Where one browser run lives: the pages, the screenshots, Chromium's profile and home.
    struct Scratch {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("launch-browser-\(UUID().uuidString)")
        var home: URL { folder.appendingPathComponent("home") }

        func make() throws {
            for sub in ["home", "profile"] {
                try FileManager.default.createDirectory(at: folder.appendingPathComponent(sub), withIntermediateDirectories: true)
            }
        }

        /// Runs headless Chromium on `page` with `arguments` (`--screenshot=…`, `--dump-dom`);
        /// returns what it printed on standard output once it has exited 0.
        func chromium(_ executable: String, _ arguments: [String], page: URL) async throws -> [String] {
            let environment = ["HOME": home.path, "XDG_CONFIG_HOME": home.appendingPathComponent(".config").path,
                               "XDG_CACHE_HOME": home.appendingPathComponent(".cache").path,
                               "XDG_DATA_HOME": home.appendingPathComponent(".local/share").path]
            let child = try ChildProcess(executable: executable, environment: environment, arguments: [
                "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--force-device-scale-factor=1",
                "--user-data-dir=\(folder.appendingPathComponent("profile").path)", "--window-size=1200,800",
            ] + arguments + [page.absoluteString])
            let status = await child.waitForExit(seconds: 60)
            try #require(status == 0, "chromium exited with \(status.map(String.init) ?? "no status within 60 s"): \(child.errors.suffix(2_000))")
            return child.lines
        }
    }

    /// The width and height a PNG's header gives, or `nil` when `data` is not a PNG.
    static func pngSize(_ data: Data) -> (width: Int, height: Int)? {
        let bytes = [UInt8](data.prefix(24))
        guard bytes.count == 24, bytes[0..<8] == [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A], bytes[12..<16] == [0x49, 0x48, 0x44, 0x52] else {
            return nil
        }
        func int(_ at: Int) -> Int { bytes[at..<at + 4].reduce(0) { $0 << 8 | Int($1) } }
        return (int(16), int(20))
    }

    @Test("headless Chromium draws the launch picture (not blank) and its text names every phase",
          .enabled(if: chromium != nil, "chromium is not on PATH: `apt-get install chromium` (Debian) to render the launch picture in a browser"))
    func chromiumRendersTheLaunchPicture() async throws {
        let executable = try #require(chromium)
        let scratch = Scratch()
        try scratch.make()
        defer { try? FileManager.default.removeItem(at: scratch.folder) }
        let realChromiumProfile = FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".config/chromium")
        let profileExistedBefore = FileManager.default.fileExists(atPath: realChromiumProfile.path)

        let page = scratch.folder.appendingPathComponent("launch.html")
        try Data(try await RecordedLaunch.record().html(title: "Launch in a browser").utf8).write(to: page)
        // A blank page of the same size, screenshot in the same run: what "nothing drawn" weighs.
        let blankPage = scratch.folder.appendingPathComponent("blank.html")
        try Data("<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>blank</title></head><body></body></html>".utf8).write(to: blankPage)
        let shot = scratch.folder.appendingPathComponent("shot.png"), blankShot = scratch.folder.appendingPathComponent("blank.png")
        _ = try await scratch.chromium(executable, ["--screenshot=\(shot.path)"], page: page)
        _ = try await scratch.chromium(executable, ["--screenshot=\(blankShot.path)"], page: blankPage)

        let drawn = try Data(contentsOf: shot), blank = try Data(contentsOf: blankShot)
        #expect(Self.pngSize(drawn)?.width == 1200 && Self.pngSize(drawn)?.height == 800, "a PNG of the window's size")
        #expect(Self.pngSize(blank)?.width == 1200 && Self.pngSize(blank)?.height == 800)
        // A single-colour PNG deflates to almost nothing; bars, text and a table to tens of kB.
        figure("launch picture screenshot:", drawn.count, "bytes; blank page:", blank.count, "bytes")
        #expect(drawn.count > 10 * blank.count && drawn.count > 20_000,
                "the screenshot (\(drawn.count) bytes) weighs no more than a blank page's (\(blank.count) bytes): nothing was drawn")

        let dom = try await scratch.chromium(executable, ["--dump-dom"], page: page).joined(separator: "\n")
        #expect(dom.contains("<svg"))
        #expect(!dom.lowercased().contains("<script"))
        for phase in RecordedLaunch.bootLoaderPhases { #expect(dom.contains("bootLoader.\(phase) · "), "\(phase) in the rendered page") }
        for phase in RecordedLaunch.sdkPhases { #expect(dom.contains("sdk.\(phase) · "), "\(phase) in the rendered page") }
        #expect(dom.contains(RecordedLaunch.failure))

        // Chromium wrote its profile and caches in the temporary folder, not the user's home.
        #expect(FileManager.default.fileExists(atPath: scratch.home.appendingPathComponent(".config/chromium").path))
        if !profileExistedBefore { #expect(!FileManager.default.fileExists(atPath: realChromiumProfile.path)) }
    }
}
