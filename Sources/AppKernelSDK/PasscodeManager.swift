import AppKernelAuth
import AppKernelCore
import Foundation

/// A stored passcode: a salted PBKDF2-HMAC-SHA256 hash, never the passcode itself.
public struct PasscodeRecord: Sendable, Hashable, Codable {
    /// The random salt.
    public var salt: [UInt8]
    /// PBKDF2-HMAC-SHA256(passcode, salt, iterations).
    public var hash: [UInt8]
    /// The PBKDF2 iteration count.
    public var iterations: Int
    /// Wrong answers since the last right one, across launches: counted and stored before an
    /// answer is judged.
    public var failedAttempts: Int
    /// The org's mobile policy in force when the record was last written (``PasscodeManager/mobilePolicy``),
    /// kept under the record's integrity check so a relaunch enforces it before any user is
    /// loaded. An optional field: records written before it read as "no policy".
    public var policy: PasscodePolicy?

    /// Creates a record.
    public init(salt: [UInt8], hash: [UInt8], iterations: Int, failedAttempts: Int, policy: PasscodePolicy? = nil) {
        self.salt = salt
        self.hash = hash
        self.iterations = iterations
        self.failedAttempts = failedAttempts
        self.policy = policy
    }

    /// Whether the fields are in range (a forged or damaged record is refused).
    var isPlausible: Bool {
        (8...64).contains(salt.count) && hash.count == 32 && (1...10_000_000).contains(iterations) && failedAttempts >= 0
            && (policy?.isPlausible ?? true)
    }

    /// Whether two byte strings are equal, in time that depends only on their lengths.
    static func constantTimeEqual(_ lhs: [UInt8], _ rhs: [UInt8]) -> Bool {
        guard lhs.count == rhs.count else { return false }
        return zip(lhs, rhs).reduce(0) { $0 | ($1.0 ^ $1.1) } == 0
    }
}

/// Where the passcode's hash is kept.
public protocol PasscodeStore: Sendable {
    /// The stored record, if a passcode is set.
    func load() -> PasscodeRecord?
    /// Stores (or, with `nil`, removes) the record.
    func save(_ record: PasscodeRecord?) throws
    /// The stored record, checked: `nil` when no passcode is set.
    /// - Throws: ``PasscodeDamage`` when a passcode was set but its record cannot be read or
    ///   verified. The default answers ``load()``.
    func loadVerified() throws(PasscodeDamage) -> PasscodeRecord?
    /// Reads the record (checked), changes it and stores the result as one step that another
    /// instance of the app cannot interleave with; returns what was stored. The default loads,
    /// changes and saves (enough for a store one process uses).
    func update(_ change: (PasscodeRecord?) throws -> PasscodeRecord?) throws -> PasscodeRecord?
}

extension PasscodeStore {
    /// ``load()``: a store that cannot be damaged.
    public func loadVerified() throws(PasscodeDamage) -> PasscodeRecord? { load() }
}

/// Keeps the passcode record in memory.
public final class InMemoryPasscodeStore: PasscodeStore {
    private let record = Locked<PasscodeRecord?>(nil)
    /// Creates an empty store.
    public init() {}
    /// The stored record.
    public func load() -> PasscodeRecord? { record.withLock { $0 } }
    /// Stores the record.
    public func save(_ record: PasscodeRecord?) throws { self.record.withLock { $0 = record } }
}

/// Asks the user for the passcode — the app's passcode screen; tests script the answers.
@MainActor
public protocol PasscodeProvider: AnyObject {
    /// Asks for the passcode. `attempt` counts from 1; `remaining` is how many wrong answers are
    /// left before the user is logged out. Return `nil` if the user gives up.
    func passcode(attempt: Int, remaining: Int) async -> String?
    /// Asks for a new passcode of at least `minimumLength` characters: the right passcode was
    /// entered but is shorter than the org's mobile policy now requires, and must be changed
    /// before the app unlocks. Return `nil` if the user gives up (the app stays locked). The
    /// default answers `nil`.
    func newPasscode(minimumLength: Int) async -> String?
}

extension PasscodeProvider {
    /// `nil`: a provider that cannot ask for a new passcode leaves the app locked.
    public func newPasscode(minimumLength: Int) async -> String? { nil }
}

/// What an answer to the passcode prompt did (``PasscodeManager/unlock(with:)``).
public enum PasscodeCheck: Sendable, Hashable {
    /// Right (or no passcode is set and none is required): the app is unlocked.
    case unlocked
    /// Not unlocked: the answer was wrong (counted), or the stored passcode cannot be trusted or
    /// its count cannot be stored (fail closed).
    case wrong
    /// Right, but shorter than the mobile policy's minimum — or no passcode is set while the
    /// policy requires one: the failure count is cleared, the app stays locked until a passcode
    /// of at least `minimumLength` characters is set
    /// (``PasscodeManager/setPasscode(_:)`` or ``PasscodeManager/changePasscode(from:to:)``).
    case changeRequired(minimumLength: Int)
}

/// Why a passcode could not be set, changed or removed.
public enum PasscodeError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Shorter than the policy's minimum.
    case tooShort(minimum: Int)
    /// The current passcode given was wrong.
    case wrongPasscode
    /// No passcode is set.
    case notSet
    /// The store failed.
    case storeFailed(String)
    /// The stored passcode cannot be trusted (see ``PasscodeDamage``).
    case damaged(PasscodeDamage)
    /// The org's mobile policy demands a screen lock: the passcode cannot be removed while a
    /// user with that policy is logged in.
    case requiredByPolicy(PasscodePolicy)

    /// What went wrong.
    public var description: String {
        switch self {
        case .tooShort(let minimum): "the passcode must have at least \(minimum) characters"
        case .wrongPasscode: "the current passcode is wrong"
        case .notSet: "no passcode is set"
        case .storeFailed(let reason): "the passcode could not be stored: \(reason)"
        case .damaged(let damage): "\(damage)"
        case .requiredByPolicy(let policy):
            "the org's mobile policy (\(policy)) requires a passcode: it cannot be removed while a user with that policy is logged in"
        }
    }
}

/// The app passcode: set, change, remove, verify; locks after a time in the background; after
/// too many wrong answers — counted across launches, each stored before the answer is judged —
/// it reports, and the SDK manager logs every user out and wipes their data, as the Mobile SDK
/// does. A record that cannot be trusted (``PasscodeDamage``) never reads as "no passcode".
///
/// The org's mobile policy (``mobilePolicy``, the strictest over the logged-in users; the SDK
/// manager keeps it current) tightens the app's own settings: the lock comes after
/// ``enforcedLockTimeout``, a new passcode needs ``enforcedMinimumLength`` characters, and a right
/// passcode that is shorter must be changed before the app unlocks (``PasscodeCheck/changeRequired(minimumLength:)``).
@MainActor
public final class PasscodeManager {
    /// Where the hash and the failure count live.
    public var store: any PasscodeStore
    /// The PBKDF2 iteration count for new passcodes.
    public var iterations: Int
    /// Wrong answers allowed before every user is logged out. Default 10.
    public var maximumAttempts: Int
    /// The app's own time in the background after which it locks. Default 10 minutes. A mobile
    /// policy may shorten it: the lock comes after ``enforcedLockTimeout``.
    public var lockTimeout: Duration
    /// The app's own shortest passcode. Default 4. A mobile policy may raise it: passcodes are
    /// held to ``enforcedMinimumLength``.
    public var minimumLength: Int
    /// Whether the app is locked until the passcode is entered (and, if ``isChangeRequired``,
    /// changed).
    public private(set) var isLocked = false
    /// Whether the right passcode was entered but is shorter than ``enforcedMinimumLength``: the
    /// app stays locked until a long enough one is set.
    public private(set) var isChangeRequired = false
    /// The org's mobile policy in force — the strictest over the logged-in users (see
    /// ``enforce(_:)``); `nil` when none. A new manager starts with the one its stored record
    /// kept, so a relaunch enforces it before any user is loaded.
    public private(set) var mobilePolicy: PasscodePolicy?

    /// The time in the background after which the app locks: ``lockTimeout``, or the mobile
    /// policy's `screen_lock` when that is shorter.
    public var enforcedLockTimeout: Duration { min(lockTimeout, mobilePolicy?.lockTimeout ?? lockTimeout) }
    /// The shortest passcode accepted: ``minimumLength``, or the mobile policy's `pin_length`
    /// when that is longer.
    public var enforcedMinimumLength: Int { max(minimumLength, mobilePolicy?.minimumLength ?? minimumLength) }

    /// Creates a passcode manager.
    public init(store: any PasscodeStore = InMemoryPasscodeStore(), iterations: Int = 10_000, maximumAttempts: Int = 10,
                lockTimeout: Duration = .seconds(600), minimumLength: Int = 4) {
        self.store = store
        self.iterations = iterations
        self.maximumAttempts = maximumAttempts
        self.lockTimeout = lockTimeout
        self.minimumLength = minimumLength
        mobilePolicy = try? store.loadVerified()?.policy
    }

    /// Puts `policy` in force (`nil`: none — the app's own settings hold) and keeps it in the
    /// stored record when a passcode is set, under its integrity check. A record that cannot be
    /// trusted is left as it is (the next check reports it); a failed write leaves the policy in
    /// force for this run (each user's account keeps their policy too). The SDK manager calls
    /// this when users log in or out, and at launch.
    public func enforce(_ policy: PasscodePolicy?) {
        mobilePolicy = policy
        guard var stored = try? record(), stored.policy != policy else { return }
        stored.policy = policy
        try? store.save(stored)
    }

    /// The stored record, checked (see ``PasscodeStore/loadVerified()``).
    /// - Throws: ``PasscodeDamage`` when it cannot be trusted.
    public func record() throws(PasscodeDamage) -> PasscodeRecord? { try store.loadVerified() }

    /// Whether a passcode is set — `true` too when its record cannot be trusted: a damaged lock
    /// is still a lock.
    public var isSet: Bool {
        do { return try record() != nil } catch { return true }
    }

    /// Whether the org's mobile policy demands a lock (a `screen_lock` is in force): a passcode
    /// must then be set — while none is, the app is locked (``lock()``) and an answer to the
    /// prompt is ``PasscodeCheck/changeRequired(minimumLength:)``, and the passcode cannot be
    /// removed.
    public var isRequiredByPolicy: Bool { mobilePolicy?.lockTimeout != nil }

    /// Wrong answers since the last right one, as stored (across launches); a record that cannot
    /// be trusted counts as ``maximumAttempts``.
    public var failedAttempts: Int {
        do { return try record()?.failedAttempts ?? 0 } catch { return maximumAttempts }
    }

    /// Wrong answers left before every user is logged out.
    public var remainingAttempts: Int { max(maximumAttempts - failedAttempts, 0) }

    /// Sets the passcode (replacing any), stored as a salted hash with no failures and the
    /// mobile policy in force; unlocks.
    /// - Throws: ``PasscodeError/tooShort(minimum:)`` below ``enforcedMinimumLength``;
    ///   ``PasscodeError/storeFailed(_:)``.
    public func setPasscode(_ passcode: String) throws(PasscodeError) {
        guard passcode.count >= enforcedMinimumLength else { throw .tooShort(minimum: enforcedMinimumLength) }
        let salt = SecureRandom.bytes(16)
        let record = PasscodeRecord(salt: salt, hash: Self.hash(passcode, salt: salt, iterations: iterations),
                                    iterations: iterations, failedAttempts: 0, policy: mobilePolicy)
        do { try store.save(record) } catch { throw .storeFailed("\(error)") }
        isChangeRequired = false
        isLocked = false
    }

    /// Changes the passcode, given the current one (a wrong one counts as a failed attempt). A
    /// new one shorter than ``enforcedMinimumLength`` is refused before the current one is checked.
    public func changePasscode(from current: String, to new: String) throws(PasscodeError) {
        guard new.count >= enforcedMinimumLength else { throw .tooShort(minimum: enforcedMinimumLength) }
        guard try check(current) else { throw .wrongPasscode }
        try setPasscode(new)
    }

    /// Removes the passcode, given the current one (a wrong one counts as a failed attempt).
    /// - Throws: ``PasscodeError/requiredByPolicy(_:)`` while the mobile policy sets a lock
    ///   timeout (checked first); ``PasscodeError/wrongPasscode``; ``PasscodeError/notSet``.
    public func removePasscode(current: String) throws(PasscodeError) {
        if let mobilePolicy, isRequiredByPolicy { throw .requiredByPolicy(mobilePolicy) }
        guard try check(current) else { throw .wrongPasscode }
        reset()
    }

    /// Answers the passcode prompt: right unlocks and clears the failure count — unless the
    /// passcode is shorter than ``enforcedMinimumLength`` (the mobile policy rose since it was
    /// set): then the app stays locked until it is changed. Wrong counts a failure, stored before
    /// the answer is judged, so quitting or a kill during the check still counts it.
    public func unlock(with passcode: String) -> PasscodeCheck {
        do {
            guard try check(passcode) else { return .wrong }
        } catch .notSet {
            guard !isRequiredByPolicy else {
                isChangeRequired = true
                isLocked = true
                return .changeRequired(minimumLength: enforcedMinimumLength)
            }
            isLocked = false
            return .unlocked
        } catch {
            return .wrong
        }
        guard passcode.count >= enforcedMinimumLength else {
            isChangeRequired = true
            isLocked = true
            return .changeRequired(minimumLength: enforcedMinimumLength)
        }
        isLocked = false
        return .unlocked
    }

    /// Checks a passcode (``unlock(with:)``): `true` when it unlocked the app. Always `true` when
    /// no passcode is set and none is required; `false` when it is wrong, must be changed or set
    /// first (the mobile policy's minimum or lock), or the record cannot be trusted or the count
    /// cannot be stored (fail closed).
    @discardableResult
    public func verify(_ passcode: String) -> Bool { unlock(with: passcode) == .unlocked }

    /// Whether the wrong answers have run out.
    public var hasExhaustedAttempts: Bool { failedAttempts >= maximumAttempts }

    /// Locks the app — when a passcode is set, or the mobile policy requires one
    /// (``isRequiredByPolicy``; the app stays locked until it is set).
    public func lock() { if isSet || isRequiredByPolicy { isLocked = true } }

    /// Forgets the passcode and the failures (after too many failures, tampering, or a logout).
    public func reset() {
        try? store.save(nil)
        isLocked = false
        isChangeRequired = false
    }

    /// Counts a failure and stores it, then judges the answer: right clears the count (the lock
    /// is left to the caller).
    private func check(_ passcode: String) throws(PasscodeError) -> Bool {
        // One read-modify-write under the store's lock: wrong answers given in two instances at
        // once are both counted.
        let counted: PasscodeRecord?
        do {
            counted = try store.update { stored in
                guard var stored else { return nil }
                stored.failedAttempts += 1
                return stored
            }
        } catch let error as PasscodeDamage { throw .damaged(error) } catch { throw .storeFailed("\(error)") }
        guard let record = counted else { throw .notSet }
        guard PasscodeRecord.constantTimeEqual(Self.hash(passcode, salt: record.salt, iterations: record.iterations), record.hash) else {
            return false
        }
        // A count left at one too many errs on the safe side; a passcode another instance set
        // meanwhile is kept.
        _ = try? store.update { stored in
            guard var stored, stored.salt == record.salt, stored.hash == record.hash else { return stored }
            stored.failedAttempts = 0
            return stored
        }
        return true
    }

    private static func hash(_ passcode: String, salt: [UInt8], iterations: Int) -> [UInt8] {
        PBKDF2.deriveKey(password: Array(passcode.utf8), salt: salt, iterations: iterations, length: 32)
    }
}
