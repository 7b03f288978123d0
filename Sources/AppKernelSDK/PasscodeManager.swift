import AppKernelAuth
public import Foundation
import Synchronization

/// A stored passcode: a salted PBKDF2-HMAC-SHA256 hash, never the passcode itself.
public struct PasscodeRecord: Sendable, Hashable, Codable {
    /// The random salt.
    public var salt: [UInt8]
    /// PBKDF2-HMAC-SHA256(passcode, salt, iterations).
    public var hash: [UInt8]
    /// The PBKDF2 iteration count.
    public var iterations: Int
}

/// Where the passcode's hash is kept.
public protocol PasscodeStore: Sendable {
    /// The stored record, if a passcode is set.
    func load() -> PasscodeRecord?
    /// Stores (or, with `nil`, removes) the record.
    func save(_ record: PasscodeRecord?) throws
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

/// Keeps the passcode record in a JSON file, owner-only (0600 from its first byte), so the
/// passcode survives a relaunch; a missing or unreadable file means no passcode is set.
public struct FilePasscodeStore: PasscodeStore {
    /// The file.
    public let url: URL

    /// A store in `url` (its folder must exist).
    public init(url: URL) { self.url = url }

    /// The stored record, if the file holds one.
    public func load() -> PasscodeRecord? {
        guard let data = try? Data(contentsOf: url) else { return nil }
        return try? JSONDecoder().decode(PasscodeRecord.self, from: data)
    }

    /// Writes the record (owner-only from the first byte, atomically: `PrivateFile`), or removes the file.
    public func save(_ record: PasscodeRecord?) throws {
        guard let record else {
            if FileManager.default.fileExists(atPath: url.path) { try FileManager.default.removeItem(at: url) }
            return
        }
        try PrivateFile.write(JSONEncoder().encode(record), to: url)
    }
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

    /// What went wrong.
    public var description: String {
        switch self {
        case .tooShort(let minimum): "the passcode must have at least \(minimum) characters"
        case .wrongPasscode: "the current passcode is wrong"
        case .notSet: "no passcode is set"
        case .storeFailed(let reason): "the passcode could not be stored: \(reason)"
        }
    }
}

/// The app passcode: set, change, remove, verify; locks after a time in the background; after
/// too many wrong answers it reports, and the SDK manager logs the user out and wipes their data
/// — as the Mobile SDK does.
@MainActor
public final class PasscodeManager {
    /// Where the hash lives.
    public var store: any PasscodeStore
    /// The PBKDF2 iteration count for new passcodes.
    public let iterations: Int
    /// Wrong answers allowed before the user is logged out. Default 10.
    public var maximumAttempts: Int
    /// Time in the background after which the app locks. Default 10 minutes.
    public var lockTimeout: Duration
    /// The shortest passcode accepted (the identity's mobile policy may raise it). Default 4.
    public var minimumLength: Int
    /// Wrong answers since the last right one.
    public private(set) var failedAttempts = 0
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

    /// Whether a passcode is set.
    public var isSet: Bool { store.load() != nil }

    /// Wrong answers left before the user is logged out.
    public var remainingAttempts: Int { max(maximumAttempts - failedAttempts, 0) }

    /// Sets the passcode (replacing any), stored as a salted hash.
    public func setPasscode(_ passcode: String) throws(PasscodeError) {
        guard passcode.count >= minimumLength else { throw .tooShort(minimum: minimumLength) }
        let salt = SecureRandom.bytes(16)
        let record = PasscodeRecord(salt: salt, hash: Self.hash(passcode, salt: salt, iterations: iterations), iterations: iterations)
        do { try store.save(record) } catch { throw .storeFailed("\(error)") }
        failedAttempts = 0
        isLocked = false
    }

    /// Changes the passcode, given the current one.
    public func changePasscode(from current: String, to new: String) throws(PasscodeError) {
        guard let record = store.load() else { throw .notSet }
        guard Self.matches(current, record) else { throw .wrongPasscode }
        try setPasscode(new)
    }

    /// Removes the passcode, given the current one.
    public func removePasscode(current: String) throws(PasscodeError) {
        guard let record = store.load() else { throw .notSet }
        guard Self.matches(current, record) else { throw .wrongPasscode }
        reset()
    }

    /// Checks a passcode: right unlocks and clears the failure count; wrong counts a failure.
    /// Always `true` when no passcode is set.
    @discardableResult
    public func verify(_ passcode: String) -> Bool {
        guard let record = store.load() else { return true }
        if Self.matches(passcode, record) {
            failedAttempts = 0
            isLocked = false
            return true
        }
        failedAttempts += 1
        return false
    }

    /// Whether the wrong answers have run out.
    public var hasExhaustedAttempts: Bool { failedAttempts >= maximumAttempts }

    /// Locks the app (when a passcode is set).
    public func lock() { if isSet { isLocked = true } }

    /// Forgets the passcode and the failures (after too many failures, or a logout).
    public func reset() {
        try? store.save(nil)
        failedAttempts = 0
        isLocked = false
    }

    private static func hash(_ passcode: String, salt: [UInt8], iterations: Int) -> [UInt8] {
        PBKDF2.deriveKey(password: Array(passcode.utf8), salt: salt, iterations: iterations, length: 32)
    }

    private static func matches(_ passcode: String, _ record: PasscodeRecord) -> Bool {
        let candidate = hash(passcode, salt: record.salt, iterations: record.iterations)
        // Constant-time comparison.
        guard candidate.count == record.hash.count else { return false }
        return zip(candidate, record.hash).reduce(0) { $0 | ($1.0 ^ $1.1) } == 0
    }
}
