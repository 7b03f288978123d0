/// What replaying a process host's journal (`APPKERNEL_JOURNAL`) on a ``SimulatedHost`` gave:
/// the identical trace, or the first journal line where the replay's trace differed.
///
/// ```swift
/// let replay = try await SimulatedHost.replay(journal: text) { ExplorerWorld { _ in AppDelegate() } }
/// #expect(replay.isIdentical, "\(replay)")
/// ```
public struct JournalReplay: Sendable, Hashable, CustomStringConvertible {
    /// Where a replay first differed from the journal.
    public struct Divergence: Sendable, Hashable, CustomStringConvertible {
        /// The journal's line (from 1).
        public var line: Int
        /// What the journal holds there (`= scene-1.didBecomeActive`).
        public var expected: String
        /// What the replay produced instead (`= app.didReceiveMemoryWarning`, or what says that
        /// nothing came, or that the host refused the step).
        public var actual: String

        /// Creates a divergence at `line`.
        public init(line: Int, expected: String, actual: String) {
            self.line = line
            self.expected = expected
            self.actual = actual
        }

        /// `line 12: expected '…', the replay gave '…'`.
        public var description: String { "line \(line): expected '\(expected)', the replay gave '\(actual)'" }
    }

    /// The first divergence; `nil` when the replay's trace is the journal's.
    public var divergence: Divergence?
    /// How many steps (events and time steps) were replayed.
    public var steps: Int
    /// How many of the journal's observations (`=` lines) the replay matched.
    public var matchedObservations: Int
    /// Whether the journal ended with a partial line (a process killed mid-write), left out.
    public var droppedPartialLine: Bool

    /// Whether the replay produced every observation of the journal, in order.
    public var isIdentical: Bool { divergence == nil }

    /// `identical (9 steps, 41 trace lines)` or `diverged at line 12: …`.
    public var description: String {
        guard let divergence else {
            return "identical (\(steps) steps, \(matchedObservations) trace lines\(droppedPartialLine ? ", a partial last line left out" : ""))"
        }
        return "diverged at \(divergence) (after \(steps) steps and \(matchedObservations) matching trace lines)"
    }
}

/// A journal the replay cannot read: which line, what is wrong, and what to do.
public struct JournalReplayError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The journal's line (from 1); 0 for the journal as a whole.
    public var line: Int
    /// What is wrong.
    public var message: String

    /// `journal line 7: unknown step 'sleep'; …`.
    public var description: String { line > 0 ? "journal line \(line): \(message)" : "journal: \(message)" }
}
