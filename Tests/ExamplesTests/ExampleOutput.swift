import ChildProcess
import Foundation
import Testing

/// What an example printed, without the timeline's time stamps and measured durations.
struct ExampleOutput {
    let texts: [String]

    /// `lines` as printed: `   12.3 ms  text` (continuation lines indented the same).
    init(_ lines: [String]) {
        texts = lines.map { line in
            let text = line.count > 14 ? String(line.dropFirst(14)) : line.trimmingCharacters(in: .whitespaces)
            return text.replacingOccurrences(of: #"\(\d+\.\d ms\)"#, with: "(…)", options: .regularExpression)
        }
    }

    /// The first index at or after `start` whose text starts with `prefix`.
    func index(of prefix: String, from start: Int = 0) -> Int? {
        texts[min(start, texts.count)...].firstIndex { $0.hasPrefix(prefix) }
    }

    /// Expects lines starting with `prefixes`, in this order (other lines may come between).
    func expectInOrder(_ prefixes: [String], sourceLocation: SourceLocation = #_sourceLocation) {
        var next = 0
        for prefix in prefixes {
            guard let found = index(of: prefix, from: next) else {
                Issue.record("missing, in order: '\(prefix)'\n--- output ---\n\(texts.joined(separator: "\n"))", sourceLocation: sourceLocation)
                return
            }
            next = found + 1
        }
    }
}

/// Runs the example `executable` to its end — standard input `input`, then closed — and expects
/// it to exit with `status` within `seconds`, showing its standard error if it does not.
/// A run given no data or configuration home gets temporary ones, removed after it: no run
/// writes into the real `~/.local/share` or `~/.config` (AccountsApp keeps its key file there).
func runExample(_ executable: String, arguments: [String] = [], input: String = "", environment: [String: String] = [:],
                status: Int32 = 0, seconds: Double = 60, sourceLocation: SourceLocation = #_sourceLocation) async throws -> ChildProcess {
    let own = try TemporaryDataHome()
    let child = try ChildProcess(executable: executable, environment: own.environment.merging(environment) { $1 }, arguments: arguments, input: input)
    #expect(await child.waitForExit(seconds: seconds) == status, "stderr: \(child.errors)", sourceLocation: sourceLocation)
    withExtendedLifetime(own) {}
    return child
}

/// A data home of its own for an example run (`XDG_DATA_HOME`) and a configuration home apart
/// from it (`XDG_CONFIG_HOME`, where AccountsApp keeps its master key file), both removed when
/// the value goes.
final class TemporaryDataHome {
    let url: URL
    /// The configuration home: a sibling of the data home, not inside it.
    let configURL: URL
    init() throws {
        let id = UUID().uuidString
        url = FileManager.default.temporaryDirectory.appendingPathComponent("data-home-\(id)")
        configURL = FileManager.default.temporaryDirectory.appendingPathComponent("config-home-\(id)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: configURL, withIntermediateDirectories: true)
    }
    deinit {
        try? FileManager.default.removeItem(at: url)
        try? FileManager.default.removeItem(at: configURL)
    }
    /// The environment that points an example at them.
    var environment: [String: String] { ["XDG_DATA_HOME": url.path, "XDG_CONFIG_HOME": configURL.path] }
    /// AccountsApp's master key file.
    var keyFile: URL { configURL.appendingPathComponent("AccountsApp/master.key") }
}
