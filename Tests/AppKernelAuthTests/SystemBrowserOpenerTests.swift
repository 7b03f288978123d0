import Foundation
import Testing
@testable import AppKernelAuth
import AppKernelCore
import LoopbackServer
#if canImport(Glibc)
import Glibc
#endif

/// The system opener never puts the authorize URL — its `state` and `code_challenge` — in a
/// process's arguments: `/proc/<pid>/cmdline` is readable by every local user. These tests run
/// the real opener (`Process`) with a stand-in `xdg-open` on `PATH` that records its arguments —
/// exactly what `/proc/<pid>/cmdline` shows of it — and plays the browser with the page it got.
@Suite(.serialized, .timeLimit(.minutes(1)))
struct SystemBrowserOpenerTests {
    /// A desktop of its own: `bin/xdg-open` writes its arguments, one a line, into a FIFO the
    /// test reads; `runtime` is the private `$XDG_RUNTIME_DIR`.
    final class FakeDesktop {
        let root: URL
        let runtime: URL
        private let bin: URL
        private let fifo: URL

        init() throws {
            root = FileManager.default.temporaryDirectory.appendingPathComponent("appkernel-opener-\(UUID().uuidString)")
            bin = root.appendingPathComponent("bin")
            runtime = root.appendingPathComponent("runtime")
            fifo = root.appendingPathComponent("arguments.fifo")
            for directory in [root, bin, runtime] {
                try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
            }
            guard mkfifo(fifo.path, 0o600) == 0 else { throw CocoaError(.fileWriteUnknown) }
            let script = bin.appendingPathComponent("xdg-open")
            try Data("#!/bin/sh\nfor argument in \"$@\"; do printf '%s\\n' \"$argument\"; done > '\(fifo.path)'\n".utf8).write(to: script)
            try FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: script.path)
        }

        var environment: [String: String] {
            ["PATH": "\(bin.path):/usr/bin:/bin", "DISPLAY": ":0", "XDG_RUNTIME_DIR": runtime.path, "TMPDIR": root.path]
        }

        /// The arguments `xdg-open` was started with, once it has run.
        func arguments() async -> [String] {
            let path = fifo.path
            let text = await withCheckedContinuation { (continuation: CheckedContinuation<String, Never>) in
                // Opening a FIFO for reading blocks until a writer opens it: a thread of its own,
                // never one of the cooperative pool's.
                Thread {
                    let data = FileHandle(forReadingAtPath: path).map { $0.readDataToEndOfFile() } ?? Data()
                    continuation.resume(returning: String(decoding: data, as: UTF8.self))
                }.start()
            }
            return text.split(separator: "\n").map(String.init)
        }

        deinit {
            // Ends a reader still waiting (a test that failed before xdg-open ran), then cleans up.
            let writer = open(fifo.path, O_WRONLY | O_NONBLOCK)
            if writer >= 0 { close(writer) }
            try? FileManager.default.removeItem(at: root)
        }
    }

    /// The URL the forwarding page sends the browser to (its meta refresh).
    static func forwardedURL(in html: String) throws -> URL {
        let marker = "http-equiv=\"refresh\" content=\"0;url="
        let start = try #require(html.range(of: marker)).upperBound
        let end = try #require(html[start...].firstIndex(of: "\""))
        let address = html[start..<end].replacingOccurrences(of: "&quot;", with: "\"").replacingOccurrences(of: "&lt;", with: "<")
            .replacingOccurrences(of: "&gt;", with: ">").replacingOccurrences(of: "&#39;", with: "'").replacingOccurrences(of: "&amp;", with: "&")
        return try #require(URL(string: address))
    }

    static func mode(_ path: String) throws -> Int {
        try #require((FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? NSNumber)?.intValue)
    }

    @Test func theOpenersCommandLineCarriesNoStateAndThePrivatePageIsRemovedAfterTheLogin() async throws {
        let desktop = try FakeDesktop()
        let server = try await LoginFormServer.start()
        defer { server.stop() }
        let session = LoginSession(config: server.oauthConfig, transport: URLSessionTransport(timeout: 10))
        let told = Told()
        let opener = BrowserOpener.system(environment: desktop.environment, announce: told.append)
        let login = Task { try await session.logIn(using: .loopback(port: 0, opener: opener)) }
        let arguments = await desktop.arguments()
        let page = try #require(arguments.first)
        #expect(arguments.count == 1)
        for secret in ["state", "code_challenge", "client_id", "redirect_uri", "http", "?"] {
            #expect(!page.contains(secret), "xdg-open's command line must not show \(secret): \(page)")
        }
        #expect(page.hasPrefix(desktop.runtime.path + "/appkernel-login-"), "in the private $XDG_RUNTIME_DIR")
        #expect(try Self.mode(page) == 0o600)
        let directory = URL(fileURLWithPath: page).deletingLastPathComponent()
        #expect(try Self.mode(directory.path) == 0o700)
        let authorizeURL = try Self.forwardedURL(in: String(contentsOfFile: page, encoding: .utf8))
        let query = TestHTTPServer.decodeForm(authorizeURL.query(percentEncoded: true) ?? "")
        #expect(query["state"] != nil && query["code_challenge"] != nil, "the page, not the command line, carries them")
        try await server.playBrowser(submittingLoginFormAt: authorizeURL, user: "ada", password: "secret")
        #expect(try await login.value.1.username == "ada@example.com")
        #expect(!FileManager.default.fileExists(atPath: page))
        #expect(!FileManager.default.fileExists(atPath: directory.path))
        #expect(try FileManager.default.contentsOfDirectory(atPath: desktop.runtime.path).isEmpty)
        #expect(told.lines.first?.hasPrefix("Opening the login page in the browser. If it does not appear, open this address in a browser:\n  http") == true)
    }

    enum Ending: String, CaseIterable { case denied, cancelled, timedOut }

    @Test(arguments: Ending.allCases)
    func thePageIsRemovedHoweverTheLoginEnds(_ ending: Ending) async throws {
        let desktop = try FakeDesktop()
        let server = try await LoginFormServer.start()
        defer { server.stop() }
        let clock = ManualClock()
        let session = LoginSession(config: server.oauthConfig, transport: URLSessionTransport(timeout: 10))
        let opener = BrowserOpener.system(environment: desktop.environment, announce: Told().append)
        let login = Task { try await session.logIn(using: .loopback(port: 0, opener: opener, timeout: .seconds(60), clock: clock)) }
        let page = try #require(await desktop.arguments().first)
        #expect(FileManager.default.fileExists(atPath: page))
        switch ending {
        case .denied:
            let authorizeURL = try Self.forwardedURL(in: String(contentsOfFile: page, encoding: .utf8))
            try await server.playBrowser(submittingLoginFormAt: authorizeURL, user: "ada", password: "", action: "deny")
        case .cancelled:
            login.cancel()
        case .timedOut:
            await clock.waitForSleepers()
            clock.advance(by: .seconds(60))
        }
        await #expect(throws: LoginError.self) { try await login.value }
        #expect(!FileManager.default.fileExists(atPath: page))
        #expect(try FileManager.default.contentsOfDirectory(atPath: desktop.runtime.path).isEmpty)
    }

    @Test func aRuntimeDirectoryThatIsNotPrivateIsPassedOver() throws {
        let desktop = try FakeDesktop()
        let shared = desktop.root.appendingPathComponent("shared")
        try FileManager.default.createDirectory(at: shared, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o755])
        let link = desktop.root.appendingPathComponent("link")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: desktop.runtime)
        func base(_ runtime: String?) -> String {
            var environment = ["TMPDIR": desktop.root.path]
            environment["XDG_RUNTIME_DIR"] = runtime
            return ForwardingPage.baseDirectory(environment: environment).path
        }
        #expect(base(desktop.runtime.path) == desktop.runtime.path)
        #expect(base(shared.path) == desktop.root.path, "group and others may read it")
        #expect(base(link.path) == desktop.root.path, "a symbolic link is not followed")
        #expect(base("runtime") == desktop.root.path, "a relative path")
        #expect(base(nil) == desktop.root.path)
    }

    @Test func thePageEscapesTheURLWhereverItStands() throws {
        let url = try #require(URL(string: "https://login.example.com/authorize?a=1&b=%22x%22&c='y'"))
        let html = ForwardingPage.html(forwardingTo: url)
        #expect(try Self.forwardedURL(in: html) == url)
        #expect(!html.contains("'y'"))
        #expect(html.contains("\\u0026b=%22x%22\\u0026c=\\u0027y\\u0027"), "the script's string escapes & and '")
    }
}

/// What the opener told the person (instead of standard error: the test's output stays quiet).
final class Told: Sendable {
    private let kept = Locked<[String]>([])
    /// Every announcement, in order.
    var lines: [String] { kept.withLock { $0 } }
    /// Keeps one announcement.
    @Sendable func append(_ text: String) { kept.withLock { $0.append(text) } }
}
