import AppKernel
public import Foundation

extension SimulatedHost {
    /// Replays the journal a `ProcessHost` wrote (`APPKERNEL_JOURNAL=path`) on a fresh
    /// ``ExplorerWorld`` — its ``SimulatedHost`` and ``TestClock`` — running each step through the
    /// explorer's step runner (`steps`, ``StepSet/system`` and ``StepSet/signals(_:)`` by
    /// default: time steps move the world's clock by the recorded amounts), records the trace
    /// (delegate, scene, system, hook-stop and phase stages, as the journal does) and compares it
    /// with the journal's observations (`=` lines).
    ///
    /// ```swift
    /// let replay = try await SimulatedHost.replay(journal: text) { ExplorerWorld { _ in AppDelegate() } }
    /// #expect(replay.isIdentical, "\(replay)")
    /// ```
    ///
    /// After each step the replay lets the app's work run (its tasks, on the main actor and
    /// elsewhere) until it has produced as many trace lines as the journal recorded for the step,
    /// then goes on: the next step meets the app where the real run's next event met it. A
    /// journal cut by a kill is replayed up to its last whole line (a partial last line is left
    /// out); what the replay produces after the journal's end is not compared (the run was killed
    /// before it could happen). The world is torn down at the end (its app terminated, its
    /// clock's waiters ended).
    ///
    /// - Parameters:
    ///   - text: The journal.
    ///   - steps: The steps the journal's names run (add your own for an app's journal of its own).
    ///   - patience: How long (real time) the replay waits for a step's trace lines before it
    ///     reports them missing; it only separates "came" from "never".
    ///   - world: Makes the world the journal is replayed on: your app's delegate (with its SDK
    ///     manager, stores and fakes), called once, inside the test's scope.
    /// - Returns: ``JournalReplay``: identical, or the first journal line where the run diverged.
    /// - Throws: ``JournalReplayError`` for a journal it cannot read (a line that is not a step,
    ///   a time step or an observation; a step `steps` does not define), and what `world` throws.
    public static func replay(journal text: String, steps: StepSet = .system + .signals(), patience: Duration = .seconds(30),
                              world: @MainActor () throws -> ExplorerWorld) async throws -> JournalReplay {
        let journal = try ParsedJournal(text, steps: steps)
        let made = try world()
        made.steps = steps
        let recorder = TraceRecorder(options: [.delegates, .system, .hookStops, .phases])
        if let application = made.application { recorder.attach(to: application) }
        made.host.beforeEachLaunch { recorder.attach(to: $0) }
        do {
            let result = try await replay(journal, steps: steps, on: made, recorder: recorder, patience: patience)
            await made.tearDown()
            return result
        } catch {
            await made.tearDown()
            throw error
        }
    }

    /// Runs `journal`'s steps on `world` and compares what `recorder` records with its observations.
    private static func replay(_ journal: ParsedJournal, steps: StepSet, on world: ExplorerWorld, recorder: TraceRecorder,
                               patience: Duration) async throws -> JournalReplay {
        var result = JournalReplay(divergence: nil, steps: 0, matchedObservations: 0, droppedPartialLine: journal.droppedPartialLine)
        var seen = 0
        var index = 0
        let items = journal.items
        while index < items.count {
            let item = items[index]
            if case .step(let step) = item.kind {
                // What the replay produced that the journal did not record before this step.
                if recorder.entries.count > seen {
                    let extra = recorder.entries[seen]
                    result.divergence = .init(line: item.line, expected: item.text, actual: "= \(extra.stage.traceLine(for: extra.event))")
                    return result
                }
                do {
                    guard let definition = steps.definition(named: step.name) else { throw ParsedJournal.unknownStep(step.name, line: item.line, steps: steps) }
                    try await definition.perform(world, step.argument)
                } catch let error as ApplicationError {
                    result.divergence = .init(line: item.line, expected: item.text, actual: "the host refused it: \(error)")
                    return result
                } catch let error as StepArgumentError {
                    throw JournalReplayError(line: item.line, message: "\(error)")
                }
                result.steps += 1
                index += 1
            }
            var expected: [JournalItem] = []
            while index < items.count, case .observation = items[index].kind {
                expected.append(items[index])
                index += 1
            }
            guard !expected.isEmpty else { continue }
            await Self.waitForLines(recorder, count: seen + expected.count, patience: patience)
            let produced = recorder.entries[seen...].prefix(expected.count).map { $0.stage.traceLine(for: $0.event) }
            for (offset, observation) in expected.enumerated() {
                guard case .observation(let line) = observation.kind else { continue }
                guard offset < produced.count else {
                    result.divergence = .init(line: observation.line, expected: observation.text,
                                              actual: "nothing: the app produced no further trace line within \(patience)")
                    return result
                }
                guard produced[offset] == line else {
                    result.divergence = .init(line: observation.line, expected: observation.text, actual: "= \(produced[offset])")
                    return result
                }
                result.matchedObservations += 1
            }
            seen += expected.count
        }
        return result
    }

    /// Replays the journal in the file `url` (see the variant that takes the journal's text).
    /// - Throws: the file's read error, ``JournalReplayError``, and what `world` throws.
    public static func replay(journal url: URL, steps: StepSet = .system + .signals(), patience: Duration = .seconds(30),
                              world: @MainActor () throws -> ExplorerWorld) async throws -> JournalReplay {
        let data = try Data(contentsOf: url)
        return try await replay(journal: String(decoding: data, as: UTF8.self), steps: steps, patience: patience, world: world)
    }

    /// Lets the app's work run until `recorder` holds `count` entries, or `patience` passes.
    private static func waitForLines(_ recorder: TraceRecorder, count: Int, patience: Duration) async {
        let real = ContinuousClock()
        let deadline = real.now.advanced(by: patience)
        var yields = 0
        while recorder.entries.count < count {
            yields += 1
            // Yields first (the app's main-actor tasks); past them, work off the main actor needs time.
            if yields > 1_000 {
                guard real.now < deadline else { return }
                try? await Task.sleep(for: .milliseconds(1))
            } else {
                await Task.yield()
            }
        }
    }
}

/// One line of a journal that the replay acts on.
struct JournalItem {
    enum Kind {
        /// A step, time steps among them (`+30s`).
        case step(ExplorerStep)
        case observation(String)
    }

    /// The line number (from 1).
    var line: Int
    /// The line as written, without its comment.
    var text: String
    var kind: Kind
}

/// A journal read into its steps and observations; comments and blank lines dropped, and a
/// partial last line (no newline after it: the process was killed mid-write) left out. Steps are
/// read as a ``Schedule`` reads them.
struct ParsedJournal {
    var items: [JournalItem] = []
    var droppedPartialLine = false

    init(_ text: String, steps: StepSet) throws(JournalReplayError) {
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        if let last = lines.last {
            lines.removeLast()   // after the final newline: empty, or a partial line
            droppedPartialLine = !last.isEmpty
        }
        for (offset, raw) in lines.enumerated() {
            let number = offset + 1
            let line = raw.trimmingCharacters(in: .whitespaces)
            if line.isEmpty || line.hasPrefix("#") { continue }
            if line.hasPrefix("=") {
                let observation = line.dropFirst().trimmingCharacters(in: .whitespaces)
                items.append(JournalItem(line: number, text: "= \(observation)", kind: .observation(observation)))
                continue
            }
            let text = Self.withoutComment(line)
            let step: ExplorerStep
            do { step = try Schedule.step(parsing: Substring(text), line: number) } catch {
                throw JournalReplayError(line: number, message: "'\(text)' is not a step: \(error.problem)")
            }
            guard steps.definition(named: step.name) != nil else { throw Self.unknownStep(step.name, line: number, steps: steps) }
            items.append(JournalItem(line: number, text: text, kind: .step(step)))
        }
    }

    static func unknownStep(_ name: String, line: Int, steps: StepSet) -> JournalReplayError {
        let known = steps.definitions.map { $0.name == ExplorerStep.timeName ? "+<time>" : $0.name }
        return JournalReplayError(line: line, message: "unknown step '\(name)'; add its StepDefinition to the steps the replay is given (defined: \(known.joined(separator: ", ")))")
    }

    /// The step without its comment: `#` after the argument's last `)`, or anywhere in a step
    /// without one (an argument may hold `#`: a URL's fragment).
    static func withoutComment(_ line: String) -> String {
        let searchFrom = line.lastIndex(of: ")") ?? line.startIndex
        guard let hash = line[searchFrom...].firstIndex(of: "#") else { return line }
        return line[..<hash].trimmingCharacters(in: .whitespaces)
    }
}
