import AppKernel

/// What a launch did — the Mobile SDK's `SFSDKLaunchAction` bit set.
public struct LaunchFlags: OptionSet, Sendable, Hashable, CustomStringConvertible {
    /// The flags' bits.
    public let rawValue: Int
    /// Creates flags from bits.
    public init(rawValue: Int) { self.rawValue = rawValue }

    /// The user logged in during this launch.
    public static let authenticated = LaunchFlags(rawValue: 1 << 0)
    /// A user was already logged in.
    public static let alreadyAuthenticated = LaunchFlags(rawValue: 1 << 1)
    /// Login was skipped (`shouldAuthenticate` is false: deferred login).
    public static let authBypassed = LaunchFlags(rawValue: 1 << 2)
    /// The app passcode was verified.
    public static let passcodeVerified = LaunchFlags(rawValue: 1 << 3)

    /// The set flags' names.
    public var description: String {
        let names = [(LaunchFlags.authenticated, "authenticated"), (.alreadyAuthenticated, "alreadyAuthenticated"),
                     (.authBypassed, "authBypassed"), (.passcodeVerified, "passcodeVerified")]
        return "[" + names.filter { contains($0.0) }.map(\.1).joined(separator: ", ") + "]"
    }
}
