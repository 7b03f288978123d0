/// Why the shared manager could not be set up.
public struct SDKManagerError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The class registered first.
    public var registered: String
    /// The class that asked later.
    public var requested: String

    /// Creates an error.
    public init(registered: String, requested: String) {
        self.registered = registered
        self.requested = requested
    }

    /// What went wrong and what to do.
    public var description: String {
        "SDKManager.shared is already an instance of \(registered); \(requested).initializeSDK() came too late. Call initializeSDK() once, on the most derived manager class, before anything uses SDKManager.shared."
    }
}
