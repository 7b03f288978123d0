import AppKernelAuth
import Foundation
import Synchronization

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

    /// Whether the fields are in range (a forged or damaged record is refused).
    var isPlausible: Bool {
        (8...64).contains(salt.count) && hash.count == 32 && (1...10_000_000).contains(iterations) && failedAttempts >= 0
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
    private let record = Mutex<PasscodeRecord?>(nil)
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

    /// What went wrong.
    public var description: String {
        switch self {
        case .tooShort(let minimum): "the passcode must have at least \(minimum) characters"
        case .wrongPasscode: "the current passcode is wrong"
        case .notSet: "no passcode is set"
        case .storeFailed(let reason): "the passcode could not be stored: \(reason)"
        case .damaged(let damage): "\(damage)"
        }
    }
}

/// The app passcode: set, change, remove, verify; locks after a time in the background; after
/// too many wrong answers — counted across launches, each stored before the answer is judged —
/// it reports, and the SDK manager logs every user out and wipes their data, as the Mobile SDK
/// does. A record that cannot be trusted (``PasscodeDamage``) never reads as "no passcode".
@MainActor
public final class PasscodeManager {
    /// Where the hash and the failure count live.
    public var store: any PasscodeStore
    /// The PBKDF2 iteration count for new passcodes.
    public let iterations: Int
    /// Wrong answers allowed before every user is logged out. Default 10.
    public var maximumAttempts: Int
    /// Time in the background after which the app locks. Default 10 minutes.
    public var lockTimeout: Duration
    /// The shortest passcode accepted (the identity's mobile policy may raise it). Default 4.
    public var minimumLength: Int
    /// Whether the app is locked until the passcode is entered.
    public private(set) var isLocked = false

    /// Creates a passcode manager.
    public init(store: any PasscodeStore = InMemoryPasscodeStore(), iterations: Int = 10_000, maximumAttempts: Int = 10,
                lockTimeout: Duration = .seconds(600), minimumLength: Int = 4) {
        self.store = store
        self.iterations = iterations
        self.maximumAttempts = maximumAttempts
        self.lockTimeout = lockTimeout
        self.minimumLength = minimumLength
    }

    /// The stored record, checked (see ``PasscodeStore/loadVerified()``).
    /// - Throws: ``PasscodeDamage`` when it cannot be trusted.
    public func record() throws(PasscodeDamage) -> PasscodeRecord? { try store.loadVerified() }

    /// Whether a passcode is set — `true` too when its record cannot be trusted: a damaged lock
    /// is still a lock.
    public var isSet: Bool {
        do { return try record() != nil } catch { return true }
    }

    /// Wrong answers since the last right one, as stored (across launches); a record that cannot
    /// be trusted counts as ``maximumAttempts``.
    public var failedAttempts: Int {
        do { return try record()?.failedAttempts ?? 0 } catch { return maximumAttempts }
    }

    /// Wrong answers left before every user is logged out.
    public var remainingAttempts: Int { max(maximumAttempts - failedAttempts, 0) }

    /// Sets the passcode (replacing any), stored as a salted hash with no failures.
    public func setPasscode(_ passcode: String) throws(PasscodeError) {
        guard passcode.count >= minimumLength else { throw .tooShort(minimum: minimumLength) }
        let salt = SecureRandom.bytes(16)
        let record = PasscodeRecord(salt: salt, hash: Self.hash(passcode, salt: salt, iterations: iterations),
                                    iterations: iterations, failedAttempts: 0)
        do { try store.save(record) } catch { throw .storeFailed("\(error)") }
        isLocked = false
    }

    /// Changes the passcode, given the current one (a wrong one counts as a failed attempt).
    public func changePasscode(from current: String, to new: String) throws(PasscodeError) {
        guard try check(current) else { throw .wrongPasscode }
        try setPasscode(new)
    }

    /// Removes the passcode, given the current one (a wrong one counts as a failed attempt).
    public func removePasscode(current: String) throws(PasscodeError) {
        guard try check(current) else { throw .wrongPasscode }
        reset()
    }

    /// Checks a passcode: right unlocks and clears the failure count; wrong counts a failure.
    /// The failure is stored before the answer is judged, so quitting or a kill during the
    /// check still counts it. Always `true` when no passcode is set; `false` when the record
    /// cannot be trusted or the count cannot be stored (fail closed).
    @discardableResult
    public func verify(_ passcode: String) -> Bool {
        do { return try check(passcode) } catch PasscodeError.notSet { return true } catch { return false }
    }

    /// Whether the wrong answers have run out.
    public var hasExhaustedAttempts: Bool { failedAttempts >= maximumAttempts }

    /// Locks the app (when a passcode is set).
    public func lock() { if isSet { isLocked = true } }

    /// Forgets the passcode and the failures (after too many failures, tampering, or a logout).
    public func reset() {
        try? store.save(nil)
        isLocked = false
    }

    /// Counts a failure and stores it, then judges the answer: right clears the count.
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
        isLocked = false
        return true
    }

    private static func hash(_ passcode: String, salt: [UInt8], iterations: Int) -> [UInt8] {
        PBKDF2.deriveKey(password: Array(passcode.utf8), salt: salt, iterations: iterations, length: 32)
    }
}
