public import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The folders of a data home, checked the way ssh's `StrictModes` checks a user's home and
/// `~/.ssh` before it trusts a key there — and stricter: what fails is refused, never repaired.
///
/// Two rules, one for the data home and everything below it, one for the folders above it:
///
/// - **The data home and every folder from it down** to the folder asked for must be a real
///   folder (not a symbolic link: each is opened with `O_NOFOLLOW | O_DIRECTORY`, relative to its
///   parent with `openat`), owned by the effective user, and not writable by group or others. A
///   missing folder is created `0700` (`mkdirat`) and then checked like a found one. A folder
///   that fails is refused with a ``DataHomeError`` naming it, what is wrong and the fix: a link
///   is never followed, a mode never changed (`chmod` of something found could change another
///   user's folder through a planted link).
/// - **The folders above the data home**, up to `/`, are resolved once (`realpath`: a home under
///   a linked `/home` is normal) and each must be owned by the user or by root, and not writable
///   by others unless its sticky bit is set (`/tmp`): otherwise someone else could rename the
///   data home away and put their own in its place. A group-writable folder is accepted only
///   when its group is the user's own private group (the group named after the user, with no
///   other member, as user-private-group systems with umask `002` make `~/.local/share`).
///   Missing ones are created `0700`, as the XDG Base Directory specification asks.
///
/// A folder that passed is then used by path: it is owned by the user and nobody else may write
/// to it, so nobody else can swap what it holds between the check and the use.
public enum PrivateDirectory {
    /// Makes sure `directory` exists as a private folder of the data home `home`, creating what
    /// is missing (`0700`) and checking every folder on the way.
    ///
    /// - Parameters:
    ///   - directory: The folder wanted; `home` itself or a folder inside it.
    ///   - home: The data home; `nil`: `directory` is its own data home.
    /// - Throws: ``DataHomeError`` for the first folder that is refused or cannot be created.
    public static func create(_ directory: URL, home: URL? = nil) throws(DataHomeError) {
        _ = try walk(to: directory, home: home ?? directory, creating: true)
    }

    /// Checks `directory` and the folders above it as ``create(_:home:)`` does, creating nothing.
    ///
    /// - Returns: `false` when a folder on the way is missing (nothing is there to refuse).
    /// - Throws: ``DataHomeError`` for the first folder that is refused.
    public static func check(_ directory: URL, home: URL? = nil) throws(DataHomeError) -> Bool {
        try walk(to: directory, home: home ?? directory, creating: false)
    }

    // MARK: The walk

    private static func walk(to directory: URL, home: URL, creating: Bool) throws(DataHomeError) -> Bool {
        let homePath = home.standardizedFileURL.path
        let target = directory.standardizedFileURL.path
        guard homePath.hasPrefix("/") else { throw DataHomeError(path: homePath, problem: .system(call: "an absolute path", code: EINVAL)) }
        guard target == homePath || target.hasPrefix(homePath == "/" ? "/" : homePath + "/") else {
            throw DataHomeError(path: target, problem: .outsideDataHome(home: homePath))
        }
        let homeURL = URL(fileURLWithPath: homePath)
        let below = target.dropFirst(homePath.count).split(separator: "/").map(String.init)
        guard let (parent, missingAbove) = try resolvedAncestors(of: homeURL.deletingLastPathComponent().path, creating: creating) else {
            return false
        }
        var descriptor = try openRoot()
        defer { close(descriptor) }
        var path = ""
        for component in parent.split(separator: "/").map(String.init) + missingAbove {
            path += "/" + component
            guard let next = try step(into: component, of: descriptor, path: path, creating: creating, strict: false) else { return false }
            close(descriptor)
            descriptor = next
        }
        for component in [homeURL.lastPathComponent] + below where component != "/" {
            path += "/" + component
            guard let next = try step(into: component, of: descriptor, path: path, creating: creating, strict: true) else { return false }
            close(descriptor)
            descriptor = next
        }
        return true
    }

    /// `/`, opened and checked as a folder above the data home.
    private static func openRoot() throws(DataHomeError) -> Int32 {
        let descriptor = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { throw DataHomeError(path: "/", call: "open", code: errno) }
        do { try checkAncestor(descriptor, path: "/") } catch {
            close(descriptor)
            throw error
        }
        return descriptor
    }

    /// The data home's parent with every link resolved (`realpath` of its deepest existing
    /// folder), and the names below it that are still missing; `nil` when something is missing
    /// and nothing may be created.
    private static func resolvedAncestors(of path: String, creating: Bool) throws(DataHomeError) -> (String, [String])? {
        var existing = path
        var missing: [String] = []
        while true {
            if let resolved = realpath(existing, nil) {
                defer { free(resolved) }
                return (String(cString: resolved), missing.reversed())
            }
            let code = errno
            guard code == ENOENT, existing != "/" else { throw DataHomeError(path: existing, call: "realpath", code: code) }
            guard creating else { return nil }
            let url = URL(fileURLWithPath: existing)
            missing.append(url.lastPathComponent)
            existing = url.deletingLastPathComponent().path
        }
    }

    /// Opens the folder `name` inside the open folder `parent` without following a link, creating
    /// it `0700` when it is missing and `creating`, and checks it (`strict`: the data home's rule,
    /// else the rule above it). `nil`: missing and not created.
    private static func step(into name: String, of parent: Int32, path: String, creating: Bool, strict: Bool) throws(DataHomeError) -> Int32? {
        var descriptor = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        if descriptor < 0, errno == ENOENT {
            guard creating else { return nil }
            if mkdirat(parent, name, 0o700) != 0, errno != EEXIST {
                throw DataHomeError(path: path, call: "mkdir", code: errno)
            }
            descriptor = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        }
        guard descriptor >= 0 else {
            let code = errno
            if code == ELOOP || code == ENOTDIR { throw refusal(for: name, in: parent, path: path) }
            throw DataHomeError(path: path, call: "open", code: code)
        }
        do {
            if strict { try checkInside(descriptor, path: path) } else { try checkAncestor(descriptor, path: path) }
        } catch {
            close(descriptor)
            throw error
        }
        return descriptor
    }

    /// Why `name` could not be opened as a folder: a link (naming its target) or something else.
    private static func refusal(for name: String, in parent: Int32, path: String) -> DataHomeError {
        var status = stat()
        // fstatat(2) with AT_SYMLINK_NOFOLLOW fills the local `status` about the link itself.
        guard fstatat(parent, name, &status, AT_SYMLINK_NOFOLLOW) == 0 else { return DataHomeError(path: path, call: "stat", code: errno) }
        guard status.st_mode & mode_t(S_IFMT) == mode_t(S_IFLNK) else { return DataHomeError(path: path, problem: .notADirectory) }
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        // readlinkat(2) writes at most `count - 1` bytes into the array's storage, borrowed for
        // the call; the last byte stays 0, so the text is terminated.
        let count = buffer.withUnsafeMutableBufferPointer { readlinkat(parent, name, $0.baseAddress!, $0.count - 1) }
        let target = count >= 0 ? String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self) : "?"
        return DataHomeError(path: path, problem: .symbolicLink(target: target))
    }

    /// The data home's rule: owned by the effective user, not writable by group or others.
    private static func checkInside(_ descriptor: Int32, path: String) throws(DataHomeError) {
        let status = try fileStatus(descriptor, path: path)
        let user = geteuid()
        guard status.st_uid == user else { throw DataHomeError(path: path, problem: .foreignOwner(owner: status.st_uid, user: user)) }
        guard status.st_mode & mode_t(S_IWGRP | S_IWOTH) == 0 else {
            throw DataHomeError(path: path, problem: .writableByOthers(mode: UInt32(status.st_mode & 0o7777)))
        }
    }

    /// The rule above the data home: owned by the user or root; writable by others only with the
    /// sticky bit; by the group only when it is the user's private group.
    private static func checkAncestor(_ descriptor: Int32, path: String) throws(DataHomeError) {
        let status = try fileStatus(descriptor, path: path)
        let user = geteuid()
        guard status.st_uid == user || status.st_uid == 0 else {
            throw DataHomeError(path: path, problem: .foreignOwner(owner: status.st_uid, user: user))
        }
        let sticky = status.st_mode & mode_t(S_ISVTX) != 0
        let byOthers = status.st_mode & mode_t(S_IWOTH) != 0
        let byGroup = status.st_mode & mode_t(S_IWGRP) != 0
        if !sticky, byOthers || (byGroup && !isPrivateGroup(status.st_gid)) {
            throw DataHomeError(path: path, problem: .writableByOthers(mode: UInt32(status.st_mode & 0o7777)))
        }
    }

    private static func fileStatus(_ descriptor: Int32, path: String) throws(DataHomeError) -> stat {
        var status = stat()
        // fstat(2) fills the local `status`, passed inout for the call only.
        guard fstat(descriptor, &status) == 0 else { throw DataHomeError(path: path, call: "stat", code: errno) }
        return status
    }

    /// Whether the group `gid` is the user's private group: the user's effective group, named as the user,
    /// listing nobody else.
    static func isPrivateGroup(_ gid: gid_t) -> Bool {
        guard gid == getegid(), let user = userName() else { return false }
        var entry = group()
        var result: UnsafeMutablePointer<group>?
        var buffer = [CChar](repeating: 0, count: 16 << 10)
        // getgrgid_r(3) writes the entry into `entry` and its strings into the array's storage,
        // which the closure borrows; everything the entry points at is read inside the closure.
        return buffer.withUnsafeMutableBufferPointer { storage in
            guard getgrgid_r(gid, &entry, storage.baseAddress!, storage.count, &result) == 0, result != nil,
                  let name = entry.gr_name, String(cString: name) == user else { return false }
            var member = entry.gr_mem
            while let pointer = member, let text = pointer.pointee {
                if String(cString: text) != user { return false }
                member = pointer + 1
            }
            return true
        }
    }

    /// The effective user's login name, if the user database has one.
    private static func userName() -> String? {
        var entry = passwd()
        var result: UnsafeMutablePointer<passwd>?
        var buffer = [CChar](repeating: 0, count: 16 << 10)
        // getpwuid_r(3) writes the entry into `entry` and its strings into the array's storage,
        // borrowed by the closure; the name is copied out inside it.
        return buffer.withUnsafeMutableBufferPointer { storage in
            guard getpwuid_r(geteuid(), &entry, storage.baseAddress!, storage.count, &result) == 0, result != nil,
                  let name = entry.pw_name else { return nil }
            return String(cString: name)
        }
    }
}
