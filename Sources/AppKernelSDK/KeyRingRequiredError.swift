public import Foundation

/// A launch with a data directory but no key ring: the data home would be kept in clear. The
/// launch stops in its config phase; nothing was opened or written.
public struct KeyRingRequiredError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The data home that has no key ring (``SDKManager/dataDirectory``).
    public var dataDirectory: URL

    /// Creates an error.
    public init(dataDirectory: URL) { self.dataDirectory = dataDirectory }

    /// What is wrong, and the fix.
    public var description: String {
        "SDKManager.dataDirectory is set (\(dataDirectory.path)) but SDKManager.keyRing is nil, so its stores, key-value stores and "
            + "passcode record would be kept in clear; nothing was opened — set SDKManager.keyRing = try KeyRing(dataHome:provider:) "
            + "— e.g. .keyFile(application:) or .systemdCredential(named:) — before the launch"
    }
}
