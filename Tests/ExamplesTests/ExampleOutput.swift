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
func runExample(_ executable: String, arguments: [String] = [], input: String = "", environment: [String: String] = [:],
                status: Int32 = 0, seconds: Double = 60, sourceLocation: SourceLocation = #_sourceLocation) async throws -> ChildProcess {
    let child = try ChildProcess(executable: executable, environment: environment, arguments: arguments, input: input)
    #expect(await child.waitForExit(seconds: seconds) == status, "stderr: \(child.errors)", sourceLocation: sourceLocation)
    return child
}

/// A data home of its own for an example run (`XDG_DATA_HOME`), and a configuration folder beside
/// it for the app's key file (`XDG_CONFIG_HOME`: apart from the data, as an app's is), both removed
/// when the value goes.
final class TemporaryDataHome {
    let url: URL
    let configURL: URL
    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("data-home-\(UUID().uuidString)")
        configURL = URL(fileURLWithPath: url.path + "-config")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }
    deinit {
        try? FileManager.default.removeItem(at: url)
        try? FileManager.default.removeItem(at: configURL)
    }
    /// The environment that points an example at it.
    var environment: [String: String] { ["XDG_DATA_HOME": url.path, "XDG_CONFIG_HOME": configURL.path] }
}
