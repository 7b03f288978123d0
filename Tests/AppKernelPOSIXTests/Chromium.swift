import ChildProcess
import Foundation
import Testing

/// Debian's `chromium`, run headless for the launch picture's test: its profile, HOME and XDG
/// folders all inside the test's temporary folder, so it leaves nothing behind.
enum Chromium {
    /// The browser on `PATH`, or `nil` when it is not installed.
    static let path: String? = {
        let folders = (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":")
        return folders.map { "\($0)/chromium" }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }()

    /// Runs the browser headless with `arguments`; returns what it printed on standard output.
    static func run(_ arguments: [String], in folder: URL) async throws -> String {
        let path = try #require(path)
        let profile = folder.appendingPathComponent("profile-\(UUID().uuidString)").path
        let child = try ChildProcess(executable: path, environment: ["HOME": folder.path, "XDG_CONFIG_HOME": folder.path,
                                                                      "XDG_CACHE_HOME": folder.path],
                                     arguments: ["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--user-data-dir=\(profile)"] + arguments)
        let status = await child.waitForExit(seconds: 60)
        guard status == 0 else { throw Failure(status: status, errors: child.errors) }
        return child.lines.joined(separator: "\n")
    }

    /// A screenshot of `page` at `size` (the PNG's bytes).
    static func screenshot(_ page: URL, in folder: URL, size: (Int, Int)) async throws -> Data {
        let shot = folder.appendingPathComponent("shot-\(UUID().uuidString).png")
        _ = try await run(["--screenshot=\(shot.path)", "--window-size=\(size.0),\(size.1)", page.absoluteString], in: folder)
        return try Data(contentsOf: shot)
    }

    /// The width and height in a PNG's header (`IHDR`), or `nil` when `data` is not a PNG.
    static func pngSize(_ data: Data) -> (Int, Int)? {
        let bytes = [UInt8](data.prefix(24))
        guard bytes.count == 24, bytes.prefix(8) == [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A],
              bytes[12..<16] == [0x49, 0x48, 0x44, 0x52] else { return nil }
        func word(_ at: Int) -> Int { bytes[at..<at + 4].reduce(0) { $0 << 8 | Int($1) } }
        return (word(16), word(20))
    }

    struct Failure: Error, CustomStringConvertible {
        var status: Int32?
        var errors: String
        var description: String { "chromium exited with \(status.map(String.init) ?? "no status in 60 s"): \(errors.suffix(500))" }
    }
}
