/// A service registered with ``SDKManager/registerService(named:start:)`` failed to start.
public struct ServiceStartError: Error, CustomStringConvertible {
    /// The service's name.
    public var service: String
    /// Why it failed.
    public var underlyingError: any Error

    /// "the SDK service '<name>' failed to start: <error>".
    public var description: String { "the SDK service '\(service)' failed to start: \(underlyingError)" }
}
