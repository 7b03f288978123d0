/// The alphabet a ``LifecycleExplorer`` builds schedules from: step definitions, each with the
/// arguments to try, when it is enabled, what it does and the line of Swift a printed test
/// writes for it.
///
/// ```swift
/// let steps: StepSet = .system + .time([.seconds(1), .seconds(30)])
/// ```
///
/// Add your own with ``StepDefinition``: a step of your app's (a tap, a server push of yours).
public struct StepSet: Sendable {
    /// The definitions, in the order schedules try them.
    public var definitions: [StepDefinition]

    /// Creates a set of `definitions`.
    public init(_ definitions: [StepDefinition]) { self.definitions = definitions }

    /// Both sets; a definition of `rhs` replaces one of `lhs` with the same name.
    public static func + (lhs: StepSet, rhs: StepSet) -> StepSet {
        let replaced = Set(rhs.definitions.map(\.name))
        return StepSet(lhs.definitions.filter { !replaced.contains($0.name) } + rhs.definitions)
    }

    /// The definition of `name`.
    public func definition(named name: String) -> StepDefinition? { definitions.first { $0.name == name } }

    /// Every step of the alphabet, each argument of each definition.
    var alphabet: [ExplorerStep] {
        definitions.flatMap { definition in definition.arguments.map { ExplorerStep(definition.name, $0) } }
    }
}

/// One kind of step: its name, the arguments the explorer tries, when it is legal, what it does
/// to a world and the line of Swift that does the same in a printed test.
///
/// ```swift
/// let tap = StepDefinition("tapRefresh", code: { _ in "try await (world as! MyWorld).tapRefresh()" }) { world, _ in
///     try await (world as! MyWorld).tapRefresh()
/// }
/// ```
public struct StepDefinition: Sendable {
    /// The step's name, as schedules write it.
    public var name: String
    /// The arguments the explorer tries (`[nil]`: the step takes none).
    public var arguments: [String?]
    /// Whether the step is legal now in `world` with `argument`; the explorer only takes
    /// enabled steps (a replay takes every step and reports what throws).
    public var isEnabled: @MainActor @Sendable (ExplorerWorld, String?) -> Bool
    /// Does the step.
    public var perform: @MainActor @Sendable (ExplorerWorld, String?) async throws -> Void
    /// The Swift statement a printed test writes for the step with `argument`, calling the
    /// same API ``perform`` calls, on a variable named `world`.
    public var code: @Sendable (String?) -> String

    /// Creates a definition.
    /// - Parameters:
    ///   - name: The step's name (letters, digits and `_`).
    ///   - arguments: The arguments to try; `[nil]` for a step without one.
    ///   - isEnabled: When it is legal; always by default.
    ///   - code: The Swift statement that does the step in a printed test.
    ///   - perform: Does the step.
    public init(_ name: String, arguments: [String?] = [nil],
                isEnabled: @escaping @MainActor @Sendable (ExplorerWorld, String?) -> Bool = { _, _ in true },
                code: @escaping @Sendable (String?) -> String,
                perform: @escaping @MainActor @Sendable (ExplorerWorld, String?) async throws -> Void) {
        self.name = name
        self.arguments = arguments
        self.isEnabled = isEnabled
        self.code = code
        self.perform = perform
    }
}

/// A schedule names a step its explorer's ``StepSet`` does not define.
public struct UnknownStepError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The step.
    public var step: String
    /// The names the step set defines.
    public var known: [String]

    /// The step and what is defined.
    public var description: String {
        "'\(step)' is not a step of this explorer: add its StepDefinition to the step set (defined: \(known.joined(separator: ", ")))."
    }
}
