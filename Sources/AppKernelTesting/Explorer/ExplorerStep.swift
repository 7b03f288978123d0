/// One step of a schedule the ``LifecycleExplorer`` runs: a system event (`background`), an
/// SDK or world event (`login(005B)`, `passcode(0000)`) or time moving (`+30s`).
///
/// A step is a name and an optional argument, written `name` or `name(argument)`; time is
/// written `+<n><unit>` with unit `ms`, `s` or `m`. What a name does is the business of the
/// ``StepSet`` that defines it.
public struct ExplorerStep: Hashable, Sendable, CustomStringConvertible {
    /// The step's name: `background`, `login`, or `+` for time.
    public var name: String
    /// The step's argument, if any: `0000` in `passcode(0000)`, `30s` in `+30s`.
    public var argument: String?

    /// Creates a step.
    public init(_ name: String, _ argument: String? = nil) {
        self.name = name
        self.argument = argument
    }

    /// The name of the steps that move time.
    public static let timeName = "+"

    /// Time moving by `duration` (printed in the largest unit that is exact: `+30s`, `+250ms`).
    public static func advance(by duration: Duration) -> ExplorerStep {
        ExplorerStep(timeName, ExplorerStep.text(of: duration))
    }

    /// How far the step moves time, for a time step.
    public var duration: Duration? {
        guard name == Self.timeName, let argument else { return nil }
        return Self.duration(parsing: argument)
    }

    /// The step as a schedule writes it.
    public var description: String {
        if name == Self.timeName { return "+" + (argument ?? "") }
        guard let argument else { return name }
        return "\(name)(\(argument))"
    }

    /// `30s`, `250ms`, `2m`: the largest unit in which `duration` is a whole number.
    static func text(of duration: Duration) -> String {
        let milliseconds = duration.milliseconds
        if milliseconds % 60_000 == 0, milliseconds != 0 { return "\(milliseconds / 60_000)m" }
        if milliseconds % 1_000 == 0, milliseconds != 0 { return "\(milliseconds / 1_000)s" }
        return "\(milliseconds)ms"
    }

    /// The duration a time step's argument names, or `nil` when it is not `<n>ms`, `<n>s` or `<n>m`.
    static func duration(parsing text: String) -> Duration? {
        for (unit, scale) in [("ms", Int64(1)), ("s", 1_000), ("m", 60_000)] where text.hasSuffix(unit) {
            let number = text.dropLast(unit.count)
            if unit == "s", number.hasSuffix("m") { continue }
            guard !number.isEmpty, number.allSatisfy(\.isASCII), number.allSatisfy(\.isNumber),
                  let value = Int64(number), value <= Int64.max / scale / 1_000 else { return nil }
            return .milliseconds(value * scale)
        }
        return nil
    }
}
