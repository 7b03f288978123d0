#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A folder or file of the data home that AppKernel refused to use or could not write: which
/// path, what is wrong with it, and what to do about it.
///
/// Nothing that raises it has followed a link, changed a mode or replaced a file: the data home
/// is left as it was found.
public struct DataHomeError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What is wrong.
    public enum Problem: Sendable, Hashable {
        /// Neither `XDG_DATA_HOME` nor `HOME` is an absolute path: there is no data home.
        case noDataHome
        /// The path is a symbolic link (to `target`): AppKernel never follows links in its data home.
        case symbolicLink(target: String)
        /// Something other than a folder is where a folder must be.
        case notADirectory
        /// Something other than a regular file is where a file must be.
        case notARegularFile
        /// The folder belongs to `owner`, not to the user AppKernel runs as (`user`). Above the
        /// data home, a folder of `root` (uid 0) is accepted too.
        case foreignOwner(owner: UInt32, user: UInt32)
        /// Users other than the owner may write to the folder (its mode is `mode`), so they could
        /// replace what it holds.
        case writableByOthers(mode: UInt32)
        /// The file is larger than `limit` bytes, more than any file AppKernel keeps there.
        case tooLarge(limit: Int)
        /// The folder is not inside the data home it was checked against.
        case outsideDataHome(home: String)
        /// The file system is full (`ENOSPC`); the file was left as it was.
        case diskFull
        /// The user's disk quota is used up (`EDQUOT`); the file was left as it was.
        case quotaExceeded
        /// A system call failed: which, and the C library's error number.
        case system(call: String, code: Int32)
    }

    /// The folder or file concerned.
    public var path: String
    /// What is wrong with it.
    public var problem: Problem

    /// Creates an error.
    public init(path: String, problem: Problem) {
        self.path = path
        self.problem = problem
    }

    /// The error for a system call `call` on `path` that failed with `code` (an `errno` value):
    /// `ENOSPC` is ``Problem/diskFull``, `EDQUOT` ``Problem/quotaExceeded``, anything else
    /// ``Problem/system(call:code:)``.
    public init(path: String, call: String, code: Int32) {
        self.path = path
        switch code {
        case ENOSPC: problem = .diskFull
        case EDQUOT: problem = .quotaExceeded
        default: problem = .system(call: call, code: code)
        }
    }

    /// What is wrong, where, and the fix — in one line.
    public var description: String {
        switch problem {
        case .noDataHome:
            return "no data home: neither XDG_DATA_HOME nor HOME is an absolute path — set one of them"
        case .symbolicLink(let target):
            return "\(path) is a symbolic link to \(target): move it away (AppKernel never follows links in its data home) and run again"
        case .notADirectory:
            return "\(path) is not a folder: move it away and run again"
        case .notARegularFile:
            return "\(path) is not a regular file (a link, folder or device): move it away and run again"
        case .foreignOwner(let owner, let user):
            return "\(path) is owned by uid \(owner), not you (uid \(user)): another user could change what it holds — "
                + "use a data home of your own, or `chown \(user) \(path)` if it is yours"
        case .writableByOthers(let mode):
            return "\(path) can be written by other users (mode \(String(mode & 0o7777, radix: 8))): they could replace what it holds — "
                + "run `chmod go-w \(path)`"
        case .tooLarge(let limit):
            return "\(path) is larger than \(limit) bytes, more than AppKernel ever writes there: move it away and run again"
        case .outsideDataHome(let home):
            return "\(path) is not inside the data home \(home)"
        case .diskFull:
            return "\(path): the disk is full (ENOSPC) — nothing was changed; free space on its file system and try again"
        case .quotaExceeded:
            return "\(path): the disk quota is used up (EDQUOT) — nothing was changed; free space or raise the quota and try again"
        case .system(let call, let code):
            return "\(path): \(call) failed: \(String(cString: strerror(code)))"
        }
    }
}
