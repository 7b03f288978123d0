public import Foundation
import TestFolders
public import Testing

/// What the test targets share: the explorer's search trait and known-issue matcher, and figures
/// printed only when asked.
extension Trait where Self == ConditionTrait {
    /// Off under `.ci/sanitizers` (`APPKERNEL_SANITIZER` set): a search runs the same code
    /// thousands of times, 5–15× slower there, on the main thread every main-actor test shares;
    /// the replays and printed tests of the same worlds still run under the sanitizers.
    public static var exploresManySchedules: Self {
        .disabled(if: ProcessInfo.processInfo.environment["APPKERNEL_SANITIZER"] != nil, "a search of thousands of schedules; its replays run under the sanitizer")
    }
}

extension Issue {
    /// Whether this is a failed `#expect` — the only issue a pasted printed test may record
    /// inside `withKnownIssue` (a thrown error means the paste did not reach its expectation).
    public var isExpectationFailure: Bool {
        if case .expectationFailed = kind { return true }
        return false
    }
}

/// Prints a test's measured figures (schedules explored, kills caught, ratios) when the variable
/// `APPKERNEL_TEST_FIGURES` is set, and nothing otherwise: a green `swift test` prints only the
/// test runner's own lines.
public func figure(_ items: Any...) {
    guard ProcessInfo.processInfo.environment["APPKERNEL_TEST_FIGURES"] != nil else { return }
    print(items.map { "\($0)" }.joined(separator: " "))
}

/// A parameterized test's argument shown on one line in the runner's output (a newline shown as
/// `⏎`): an argument holding a multi-line query or document would otherwise break the run's
/// lines apart.
public struct OneLine<Value: Sendable>: Sendable, CustomTestStringConvertible {
    /// The argument.
    public let value: Value
    /// Wraps `value`.
    public init(_ value: Value) { self.value = value }
    /// The argument's description with its newlines shown as `⏎`.
    public var testDescription: String { String(describing: value).replacingOccurrences(of: "\n", with: "⏎") }
}

/// The private folder the test process's `XDG_CACHE_HOME`, `XDG_DATA_HOME` and `XDG_CONFIG_HOME`
/// point into (`cache`, `data`, `config`), made before `main` and removed at exit
/// (`Tests/Support/TestFolders/TestFolders.c`), so that what Foundation's URLSession and a data
/// home at its default leave never reaches the user's folders; `nil` if it could not be made.
public var testFolders: URL? {
    appkernel_test_folders().map { URL(fileURLWithPath: String(cString: $0), isDirectory: true) }
}

extension Trait where Self == ReportsProgress {
    /// For a test that runs a minute or more (an explorer's search, the kill rounds): while any
    /// such test runs, one line every 30 s names them, so a long run is seen to progress.
    public static var reportsProgress: Self { ReportsProgress() }
}

/// See ``Testing/Trait/reportsProgress``: the tests it marks are noted while they run, and a
/// heartbeat prints `… N long tests still running after S s: three names and M more` every 30 s of wall-clock time — at most
/// six lines a run, so a green run stays within the runner's own lines and a few more.
public struct ReportsProgress: TestTrait, SuiteTrait, TestScoping {
    /// The lines printed so far, the tests running, and whether the heartbeat was started.
    private final class Board: @unchecked Sendable {
        let lock = NSLock()
        var running: [String: Int] = [:]
        var lines = 0
        var started = false
        let began = Date()
    }
    private static let board = Board()

    public var isRecursive: Bool { true }

    public func provideScope(for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void) async throws {
        guard testCase != nil || !test.isSuite else { return try await function() }
        let board = Self.board, name = test.name
        let startHeartbeat = board.lock.withLock {
            board.running[name, default: 0] += 1
            defer { board.started = true }
            return !board.started
        }
        if startHeartbeat { Self.beat(board) }
        defer { board.lock.withLock { board.running[name]! -= 1; if board.running[name] == 0 { board.running[name] = nil } } }
        try await function()
    }

    private static func beat(_ board: Board) {
        Thread.detachNewThread {
            while true {
                Thread.sleep(forTimeInterval: 30)
                let line: String? = board.lock.withLock {
                    guard !board.running.isEmpty, board.lines < 6 else { return nil }
                    board.lines += 1
                    let names = board.running.keys.sorted()
                    let more = names.count > 3 ? " and \(names.count - 3) more" : ""
                    return "… \(names.count) long \(names.count == 1 ? "test" : "tests") still running after \(Int(Date().timeIntervalSince(board.began))) s: "
                        + names.prefix(3).joined(separator: ", ") + more
                }
                if let line { print(line) }
            }
        }
    }
}

/// What a manifest shown in the documentation names: the products of its
/// `.product(name: "…", package: …)` entries, in order.
public func productsNamed(inManifest manifest: String) -> [String] {
    manifest.components(separatedBy: ".product(name: \"").dropFirst().map { $0.components(separatedBy: "\"")[0] }
}

/// The products of `products` that this package's `Package.swift` (its text, `packageManifest`)
/// does not declare as a library of the target of the same name — what a documented manifest
/// could name by mistake.
public func productsNotLibraries(_ products: some Sequence<String>, packageManifest: String) -> [String] {
    products.filter { !packageManifest.contains(".library(name: \"\($0)\", targets: [\"\($0)\"])") }
}
