public import AppKernelCore
public import Foundation

/// A launch refused by single-instance mode (``SDKManager/requiresSingleInstance``): another
/// instance of the app holds the lock in the same data home, or the lock could not be taken.
///
/// Its description says which process holds it and where: `already running as pid 4242 with
/// data home /home/ada/.local/share/AccountsApp (its lock: …/instance.lock); quit that instance
/// first, or give this one another data home`. A host that ends the process on it uses exit status
/// ``exitStatus`` (75, `EX_TEMPFAIL`: try again once the other instance has quit).
public struct SingleInstanceError: Error, Sendable, CustomStringConvertible {
    /// The exit status a process host ends with: 75, `EX_TEMPFAIL` in sysexits(3).
    public static let exitStatus: Int32 = 75

    /// The data home the lock guards (``SDKManager/dataDirectory``), `nil` when none was set.
    public var dataDirectory: URL?
    /// Why the lock was not taken (`FileLockError.Reason.held(byProcess:)` when another instance
    /// holds it); `nil` when there is no data directory to lock.
    public var lockError: FileLockError?

    /// Creates an error.
    public init(dataDirectory: URL?, lockError: FileLockError?) {
        self.dataDirectory = dataDirectory
        self.lockError = lockError
    }

    /// The process that holds the lock, when the lock file names it.
    public var holder: Int32? {
        if case .held(let process)? = lockError?.reason { return process }
        return nil
    }

    /// Whether another running instance holds the lock (rather than the lock file being unusable).
    public var isHeldByAnotherInstance: Bool {
        if case .held? = lockError?.reason { return true }
        return false
    }

    /// What happened, where, and what to do.
    public var description: String {
        guard let dataDirectory, let lockError else {
            return "single-instance mode needs a data home to lock, but SDKManager.dataDirectory is not set; set it before the launch"
        }
        switch lockError.reason {
        case .held(let process):
            let who = process.map { "as pid \($0)" } ?? "(its process id is not in the lock file)"
            return "already running \(who) with data home \(dataDirectory.path) (its lock: \(lockError.path)); quit that instance first, or give this one another data home"
        case .contended, .failed:
            return "the single-instance lock of data home \(dataDirectory.path) could not be taken: \(lockError); the app does not run unlocked"
        }
    }
}
