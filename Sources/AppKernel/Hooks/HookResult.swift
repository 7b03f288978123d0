/// What a `handle` hook decided — mPaaS's `DTFrameworkCallbackResult`.
///
/// | result | the framework… | the system hears |
/// |---|---|---|
/// | `.continue` | goes on: the next handler, then listeners, the delegate and `after` hooks | the delegate's answer |
/// | `.return` | stops: the app handled the event | "handled" (`true`) where the event has an answer |
/// | `.returnYes` | stops | `true` (YES) |
/// | `.returnNo` | stops | `false` (NO) |
///
/// For events whose answer is not a yes/no (a remote notification's fetch result), `.returnYes`
/// and `.returnNo` act as `.return`: the app took the event over and answers through the
/// event's completion handler itself.
public enum HookResult: Int, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// Let the framework go on. (mPaaS: Continue = 0.)
    case `continue` = 0
    /// The app handled the event; the framework stops. (mPaaS: Return = 1.)
    case `return` = 1
    /// Stop and answer the system YES. (mPaaS: ReturnYES = 2.)
    case returnYes = 2
    /// Stop and answer the system NO. (mPaaS: ReturnNO = 3.)
    case returnNo = 3

    /// Whether the framework stops here.
    public var stops: Bool { self != .continue }

    /// The yes/no answer a stop gives the system: `true` for `.return` and `.returnYes`,
    /// `false` for `.returnNo`, `nil` for `.continue` (the delegate answers).
    public var answer: Bool? {
        switch self {
        case .continue: nil
        case .return, .returnYes: true
        case .returnNo: false
        }
    }

    /// `continue`, `return`, `returnYes` or `returnNo`.
    public var description: String {
        switch self {
        case .continue: "continue"
        case .return: "return"
        case .returnYes: "returnYes"
        case .returnNo: "returnNo"
        }
    }
}
