/// An ``OrgWorld`` cannot be made as asked.
public struct OrgWorldError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What is wrong and what to do.
    public var reason: String
    /// "OrgWorld: " and the reason.
    public var description: String { "OrgWorld: \(reason)" }
}
