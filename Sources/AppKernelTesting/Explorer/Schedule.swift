/// A sequence of ``ExplorerStep``s: what the ``LifecycleExplorer`` runs, shrinks, prints and
/// replays, and what `ProcessHost`'s journal records.
///
/// Written on one line with `; ` between steps, or one step per line:
///
/// ```swift
/// let schedule = try Schedule(parsing: "launch; background; +30s; memoryWarning")
/// #expect(schedule.steps.count == 4)
/// #expect(schedule.description == "launch; background; +30s; memoryWarning")
/// ```
///
/// `#` starts a comment to the end of the line; blank lines are skipped, and so are lines
/// starting with `=` (a journal's observations: the trace lines a step produced).
public struct Schedule: Hashable, Sendable, CustomStringConvertible, ExpressibleByArrayLiteral {
    /// The steps, first first.
    public var steps: [ExplorerStep]

    /// Creates a schedule of `steps`.
    public init(_ steps: [ExplorerStep]) { self.steps = steps }

    /// Creates a schedule of the literal's steps.
    public init(arrayLiteral steps: ExplorerStep...) { self.steps = steps }

    /// Reads a schedule written on one line (`launch; background; +30s`) or one step per line.
    /// - Throws: ``ScheduleSyntaxError`` naming the line and the step that is not well formed.
    public init(parsing text: String) throws(ScheduleSyntaxError) {
        var steps: [ExplorerStep] = []
        for (index, rawLine) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            var line = Substring(rawLine)
            if let hash = line.firstIndex(of: "#") { line = line[..<hash] }
            line = line.drop { $0 == " " || $0 == "\t" || $0 == "\r" }
            if line.hasPrefix("=") { continue }
            for token in line.split(separator: ";") {
                let trimmed = token.trimmingSpaces
                if trimmed.isEmpty { continue }
                steps.append(try Self.step(parsing: trimmed, line: index + 1))
            }
        }
        self.steps = steps
    }

    /// The schedule on one line, steps separated by `; `.
    public var description: String { steps.map(\.description).joined(separator: "; ") }

    static func step(parsing text: Substring, line: Int) throws(ScheduleSyntaxError) -> ExplorerStep {
        if text.hasPrefix(ExplorerStep.timeName) {
            let amount = String(text.dropFirst())
            guard ExplorerStep.duration(parsing: amount) != nil else {
                throw ScheduleSyntaxError(line: line, step: String(text), problem: "a time step is +<n>ms, +<n>s or +<n>m, as +30s")
            }
            return ExplorerStep(ExplorerStep.timeName, amount)
        }
        guard let open = text.firstIndex(of: "(") else {
            guard text.allSatisfy(Self.isNameCharacter) else {
                throw ScheduleSyntaxError(line: line, step: String(text), problem: "a step is name or name(argument); names are letters, digits and _")
            }
            return ExplorerStep(String(text))
        }
        let name = text[..<open]
        guard text.hasSuffix(")"), !name.isEmpty, name.allSatisfy(Self.isNameCharacter) else {
            throw ScheduleSyntaxError(line: line, step: String(text), problem: "a step with an argument is name(argument), its argument closed by ')'")
        }
        return ExplorerStep(String(name), String(text[text.index(after: open)..<text.index(before: text.endIndex)]))
    }

    private static func isNameCharacter(_ character: Character) -> Bool {
        character.isASCII && (character.isLetter || character.isNumber || character == "_")
    }
}

/// A schedule's text is not well formed.
public struct ScheduleSyntaxError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The line (1-based) of the step.
    public var line: Int
    /// The step as written.
    public var step: String
    /// What is wrong with it, and the form it should take.
    public var problem: String

    /// The line, the step and the fix.
    public var description: String { "schedule line \(line): '\(step)' is not a step: \(problem)." }
}

extension Substring {
    /// The text without leading and trailing blanks.
    var trimmingSpaces: Substring {
        let isBlank: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\r" }
        guard let first = firstIndex(where: { !isBlank($0) }), let last = lastIndex(where: { !isBlank($0) }) else { return "" }
        return self[first...last]
    }
}
