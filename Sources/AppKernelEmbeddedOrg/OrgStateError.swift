/// An embedded org's state file that opened (or was plain JSON of an earlier version) but does
/// not hold an org's state: which file, and why. Nothing was overwritten.
public struct OrgStateError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The state file concerned.
    public var path: String
    /// What is wrong with it.
    public var reason: String

    /// Creates an error.
    public init(path: String, reason: String) {
        self.path = path
        self.reason = reason
    }

    /// What is wrong, where, and what to do.
    public var description: String {
        "\(path) \(reason); nothing was overwritten — restore it from a backup, or move it away to start the org afresh"
    }
}
