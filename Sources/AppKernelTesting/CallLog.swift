/// A list of lines that test doubles write, in order, for whole-sequence assertions.
///
/// One log is usually shared by every double of a test — ``RecordingApplicationDelegate``, the
/// ``RecordingSceneDelegate``s it configures, and a test's own recording types — so that the
/// lines show the order in which they were called.
///
/// ```swift
/// let log = CallLog()
/// try SimulatedHost().launch(delegate: RecordingApplicationDelegate(log: log))
/// #expect(log.take() == ["app.willFinishLaunching", "app.didFinishLaunching",
///                        "app.configurationForConnecting(scene-1)", "scene-1.willConnect",
///                        "scene-1.willEnterForeground", "scene-1.didBecomeActive"])
/// ```
@MainActor
public final class CallLog {
    /// Every line written since the log was made or last taken, oldest first.
    public var lines: [String] = []

    /// Creates an empty log.
    public init() {}

    /// Writes `line` at the end of the log.
    public func append(_ line: String) { lines.append(line) }

    /// Returns the lines and empties the log, so the next assertion sees only what follows.
    public func take() -> [String] {
        defer { lines.removeAll() }
        return lines
    }
}
