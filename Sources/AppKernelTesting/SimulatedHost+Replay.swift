public import AppKernel
public import Foundation

extension SimulatedHost {
    /// Replays the journal a `ProcessHost` wrote (`APPKERNEL_JOURNAL=path`): runs its steps
    /// against a new application of this host — time steps advance the host's ``TestClock`` by
    /// the recorded amounts — records the trace (delegate, scene, system, hook-stop and phase
    /// stages, as the journal does) and compares it with the journal's observations (`=` lines).
    ///
    /// ```swift
    /// let replay = try await SimulatedHost().replay(journal: URL(fileURLWithPath: "run.journal")) { AppDelegate() }
    /// #expect(replay.isIdentical, "\(replay)")
    /// ```
    ///
    /// After each step the replay lets the app's work run (its tasks, on the main actor and
    /// elsewhere) until it has produced as many trace lines as the journal recorded for the step,
    /// then goes on: the next step meets the app where the real run's next event met it. A
    /// journal cut by a kill is replayed up to its last whole line (a partial last line is left
    /// out); what the replay produces after the journal's end is not compared (the run was killed
    /// before it could happen).
    ///
    /// - Parameters:
    ///   - text: The journal.
    ///   - makeDelegate: Makes the app's delegate for the `launch` step (the app's own: with its
    ///     SDK manager, stores and fakes), inside the test's scope.
    ///   - patience: How long (real time) the replay waits for a step's trace lines before it
    ///     reports them missing; it only separates "came" from "never".
    /// - Returns: ``JournalReplay``: identical, or the first journal line where the run diverged.
    /// - Throws: ``JournalReplayError`` for a journal it cannot read (a line that is not a step,
    ///   a time step or an observation; a host whose clock is not a ``TestClock``), and what
    ///   `makeDelegate` throws.
    public func replay(journal text: String, patience: Duration = .seconds(30),
                       makeDelegate: @MainActor () throws -> any ApplicationDelegate) async throws -> JournalReplay {
        guard let clock = clock as? TestClock else {
            throw JournalReplayError(line: 0, message: "the host's clock is not a TestClock, so the journal's time steps cannot be replayed; make the host with SimulatedHost(clock: TestClock())")
        }
        let journal = try ParsedJournal(text)
        let recorder = TraceRecorder(options: [.delegates, .system, .hookStops, .phases])
        if let application { recorder.attach(to: application) }
        beforeEachLaunch { recorder.attach(to: $0) }
        var result = JournalReplay(divergence: nil, steps: 0, matchedObservations: 0, droppedPartialLine: journal.droppedPartialLine)
        var seen = 0
        var index = 0
        let items = journal.items
        while index < items.count {
            let item = items[index]
            switch item.kind {
            case .time(let duration):
                await clock.advance(by: duration)
                result.steps += 1
            case .step(let name, let argument):
                // What the replay produced that the journal did not record before this step.
                if recorder.entries.count > seen {
                    let extra = recorder.entries[seen]
                    result.divergence = .init(line: item.line, expected: item.text, actual: "= \(extra.stage.traceLine(for: extra.event))")
                    return result
                }
                do {
                    try await perform(name, argument, line: item.line, makeDelegate: makeDelegate)
                } catch let error as ApplicationError {
                    result.divergence = .init(line: item.line, expected: item.text, actual: "the host refused it: \(error)")
                    return result
                }
                result.steps += 1
            case .observation:
                break
            }
            if case .observation = item.kind {} else { index += 1 }
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

    /// Replays the journal in the file `url` (see ``replay(journal:patience:makeDelegate:)``).
    /// - Throws: the file's read error, ``JournalReplayError``, and what `makeDelegate` throws.
    public func replay(journal url: URL, patience: Duration = .seconds(30),
                       makeDelegate: @MainActor () throws -> any ApplicationDelegate) async throws -> JournalReplay {
        let data = try Data(contentsOf: url)
        return try await replay(journal: String(decoding: data, as: UTF8.self), patience: patience, makeDelegate: makeDelegate)
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

    /// Runs one step of the journal: the host call its name maps to (the schedule's system steps).
    private func perform(_ name: String, _ argument: String?, line: Int,
                         makeDelegate: @MainActor () throws -> any ApplicationDelegate) async throws {
        func required() throws(JournalReplayError) -> String {
            guard let argument, !argument.isEmpty else { throw JournalReplayError(line: line, message: "'\(name)' needs an argument: \(name)(…)") }
            return argument
        }
        switch name {
        case "launch": try launch(delegate: makeDelegate())
        case "launchInBackground": try launch(delegate: makeDelegate(), inBackground: true)
        case "foreground": try moveToForeground()
        case "background": try moveToBackground()
        case "resign": try deactivate()
        case "activate": try activate()
        case "memoryWarning": try sendMemoryWarning()
        case "reload": try send(.reloadConfiguration)
        case "openURL":
            let text = try required()
            guard let url = URL(string: text) else { throw JournalReplayError(line: line, message: "openURL: '\(text)' is not a URL") }
            try open(url)
        case "continueActivity": try continueUserActivity(UserActivity(activityType: try required()))
        case "quickAction":
            let type = try required()
            try send(.performShortcutItem(ShortcutItem(type: type, localizedTitle: type), scene: nil,
                                          completion: Completion(event: "performShortcutItem", fallback: false)))
        case "push":
            try send(.remoteNotification(["aps": ["content-available": 1]], completion: Completion(event: "remoteNotification", fallback: .failed)))
        case "fetch": try send(.backgroundFetch(completion: Completion(event: "backgroundFetch", fallback: .failed)))
        case "localNotification": try deliverLocalNotification(LocalNotification(identifier: try required()))
        case "connectScene": try connectScene()
        case "disconnectScene":
            guard let scene = application?.connectedScenes.last else {
                throw ApplicationError(code: .notLaunched, event: "disconnectScene", state: application?.state ?? .notRunning)
            }
            try disconnectScene(scene)
        case "terminate": try terminate()
        case "signal":
            // A process host's default signal table.
            switch try required() {
            case "SIGTERM", "SIGINT": try terminate()
            case "SIGTSTP": try moveToBackground()
            case "SIGCONT": try moveToForeground()
            case "SIGHUP": try send(.reloadConfiguration)
            case "SIGUSR1": try sendMemoryWarning()
            case let other: throw JournalReplayError(line: line, message: "signal(\(other)): not in the process host's signal table (SIGTERM, SIGINT, SIGTSTP, SIGCONT, SIGHUP, SIGUSR1)")
            }
        default:
            throw ParsedJournal.unknownStep(name, line: line)
        }
    }
}

/// One line of a journal that the replay acts on.
struct JournalItem {
    enum Kind {
        case time(Duration)
        case step(String, String?)
        case observation(String)
    }

    /// The line number (from 1).
    var line: Int
    /// The line as written, without its comment.
    var text: String
    var kind: Kind
}

/// A journal read into its steps and observations; comments and blank lines dropped, and a
/// partial last line (no newline after it: the process was killed mid-write) left out.
struct ParsedJournal {
    var items: [JournalItem] = []
    var droppedPartialLine = false

    init(_ text: String) throws(JournalReplayError) {
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
            let step = Self.withoutComment(line)
            if step.hasPrefix("+") {
                guard let duration = Self.duration(step.dropFirst()) else {
                    throw JournalReplayError(line: number, message: "'\(step)' is not a time step; write +<n>ms, +<n>s or +<n>m")
                }
                items.append(JournalItem(line: number, text: step, kind: .time(duration)))
                continue
            }
            let name = step.firstIndex(of: "(").map { String(step[..<$0]) } ?? step
            guard Self.stepNames.contains(name) else { throw Self.unknownStep(name, line: number) }
            if let open = step.firstIndex(of: "(") {
                guard step.hasSuffix(")") else { throw JournalReplayError(line: number, message: "'\(step)': an argument ends with ')'") }
                let name = String(step[..<open])
                let argument = String(step[step.index(after: open)..<step.index(before: step.endIndex)])
                items.append(JournalItem(line: number, text: step, kind: .step(name, argument)))
            } else {
                items.append(JournalItem(line: number, text: step, kind: .step(step, nil)))
            }
        }
    }

    /// The steps a journal may hold: the schedule's system steps.
    static let stepNames: Set<String> = ["launch", "launchInBackground", "foreground", "background", "resign", "activate", "memoryWarning",
                                         "reload", "openURL", "continueActivity", "quickAction", "push", "fetch", "localNotification",
                                         "connectScene", "disconnectScene", "terminate", "signal"]

    static func unknownStep(_ name: String, line: Int) -> JournalReplayError {
        JournalReplayError(line: line, message: "unknown step '\(name)'; the steps are launch, launchInBackground, foreground, background, resign, activate, memoryWarning, reload, openURL(url), continueActivity(type), quickAction(type), push, fetch, localNotification(id), connectScene, disconnectScene, terminate, signal(SIGTERM)")
    }

    /// The step without its comment: `#` after the argument's last `)`, or anywhere in a step without one.
    static func withoutComment(_ line: String) -> String {
        let searchFrom = line.lastIndex(of: ")") ?? line.startIndex
        guard let hash = line[searchFrom...].firstIndex(of: "#") else { return line }
        return line[..<hash].trimmingCharacters(in: .whitespaces)
    }

    /// `250ms`, `30s`, `2m`.
    static func duration(_ text: Substring) -> Duration? {
        for (unit, make) in [("ms", Duration.milliseconds), ("s", Duration.seconds), ("m", { Duration.seconds($0 * 60) })] as [(String, (Int64) -> Duration)] {
            if text.hasSuffix(unit), let value = Int64(text.dropLast(unit.count)), value >= 0 { return make(value) }
        }
        return nil
    }
}
