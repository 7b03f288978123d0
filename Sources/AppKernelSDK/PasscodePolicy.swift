public import AppKernelAuth

/// What an org's mobile policy demands of the app passcode: a minimum length (`pin_length`) and
/// a time in the background after which the app locks (`screen_lock`, in minutes) — the Mobile
/// SDK's screen-lock policy.
///
/// Each user's identity may carry one (`UserIdentity.MobilePolicy`); with several users logged
/// in, the strictest values win — the longest minimum length, the shortest timeout
/// (``strictest(_:)``). A policy only ever tightens the app's own settings
/// (``PasscodeManager/minimumLength``, ``PasscodeManager/lockTimeout``): it never makes a passcode
/// shorter or the lock later than the app asked for.
///
/// ```swift
/// let ada = PasscodePolicy(UserIdentity.MobilePolicy(pinLength: 4, screenLockMinutes: 10))
/// let bob = PasscodePolicy(UserIdentity.MobilePolicy(pinLength: 6, screenLockMinutes: 5))
/// PasscodePolicy.strictest([ada, bob].compactMap { $0 })   // 6 characters, 5 minutes
/// ```
public struct PasscodePolicy: Sendable, Hashable, Codable, CustomStringConvertible {
    /// The shortest passcode the policy accepts, if it sets one.
    public var minimumLength: Int?
    /// The time in the background after which the app locks, if the policy sets one.
    public var lockTimeout: Duration?

    /// The longest minimum length a policy is taken at: 64 characters. Salesforce offers 4 to 8;
    /// a larger value (a damaged or hostile identity answer) would leave no passcode possible.
    public static let longestMinimumLength = 64
    /// The longest lock timeout a policy is taken at: 366 days, so minutes never overflow.
    public static let longestLockTimeoutMinutes = 366 * 24 * 60

    /// Creates a policy.
    /// - Parameters:
    ///   - minimumLength: The shortest passcode accepted (`nil`: the policy sets none).
    ///   - lockTimeout: The time in the background after which the app locks (`nil`: none).
    public init(minimumLength: Int? = nil, lockTimeout: Duration? = nil) {
        self.minimumLength = minimumLength
        self.lockTimeout = lockTimeout
    }

    /// The policy an identity's `mobile_policy` sets, as the Mobile SDK reads it: a `pin_length`
    /// above 0 is the minimum length (taken at most at ``longestMinimumLength``); a `screen_lock`
    /// above 0 is minutes in the background (taken at most at ``longestLockTimeoutMinutes``).
    /// Zero, negative and missing values set nothing; `nil` when nothing is set.
    public init?(_ mobilePolicy: UserIdentity.MobilePolicy) {
        let length = mobilePolicy.pinLength.flatMap { $0 > 0 ? min($0, Self.longestMinimumLength) : nil }
        let minutes = mobilePolicy.screenLockMinutes.flatMap { $0 > 0 ? min($0, Self.longestLockTimeoutMinutes) : nil }
        guard length != nil || minutes != nil else { return nil }
        self.init(minimumLength: length, lockTimeout: minutes.map { .seconds($0 * 60) })
    }

    /// The strictest of `policies`: the longest minimum length and the shortest lock timeout any
    /// of them sets; `nil` when none sets anything (no user has a policy: the app's own settings
    /// hold).
    public static func strictest(_ policies: some Sequence<PasscodePolicy>) -> PasscodePolicy? {
        var result = PasscodePolicy()
        for policy in policies {
            if let length = policy.minimumLength { result.minimumLength = max(result.minimumLength ?? length, length) }
            if let timeout = policy.lockTimeout { result.lockTimeout = min(result.lockTimeout ?? timeout, timeout) }
        }
        return result.minimumLength == nil && result.lockTimeout == nil ? nil : result
    }

    /// Whether the values are in the range a policy can have (a stored one out of range is damage).
    var isPlausible: Bool {
        let lengthOK = minimumLength.map { (1...Self.longestMinimumLength).contains($0) } ?? true
        let timeoutOK = lockTimeout.map { $0 > .zero && $0 <= .seconds(Self.longestLockTimeoutMinutes * 60) } ?? true
        return lengthOK && timeoutOK
    }

    /// "at least 6 characters, locks after 300 s in the background" (the parts that are set).
    public var description: String {
        let parts = [minimumLength.map { "at least \($0) characters" },
                     lockTimeout.map { "locks after \($0.components.seconds) s in the background" }].compactMap { $0 }
        return parts.isEmpty ? "no requirement" : parts.joined(separator: ", ")
    }

    // Stored as whole seconds (a policy's timeout is whole minutes), so the record reads plainly.
    private enum CodingKeys: String, CodingKey {
        case minimumLength
        case lockTimeoutSeconds
    }

    /// Reads a stored policy.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        minimumLength = try container.decodeIfPresent(Int.self, forKey: .minimumLength)
        let seconds = try container.decodeIfPresent(Int.self, forKey: .lockTimeoutSeconds)
        // Out of range: refused here rather than made into a Duration that overflows.
        if let seconds, !(1...(Self.longestLockTimeoutMinutes * 60)).contains(seconds) {
            throw DecodingError.dataCorruptedError(forKey: .lockTimeoutSeconds, in: container, debugDescription: "out of range")
        }
        lockTimeout = seconds.map { .seconds($0) }
    }

    /// Writes the policy (the timeout as whole seconds).
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encodeIfPresent(minimumLength, forKey: .minimumLength)
        try container.encodeIfPresent(lockTimeout?.components.seconds, forKey: .lockTimeoutSeconds)
    }
}
