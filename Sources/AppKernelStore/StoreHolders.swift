import AppKernelCore
import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// How an open store tells other instances of the app that it is open, and how a logout in one
/// instance never deletes a store another live instance has open.
///
/// Beside `store.sqlite`, in SQLite's own naming of its side files:
/// - `store.sqlite-open.<pid>.<n>` — one **holder** file per open ``SmartStore``, locked with
///   Core's `FileLock.acquire(at:)` for as long as the store is open. `flock(2)` locks belong to an
///   open file description, so two stores open in one process hold two locks, as two processes do,
///   and the kernel drops a killed process's locks: a holder file nobody holds is stale.
/// - `store.sqlite-wipe` — the **wipe mark**: the store's owner logged out in an instance that
///   could not delete it because another instance had it open. An open of a marked store is
///   refused; the instance that holds it learns of the logout (the SDK manager reloads its
///   user list when the app becomes active and before handing out the user's store), closes it,
///   and the wipe finishes.
///
/// The remover writes the mark **before** it looks for holders; an opener takes its holder
/// **before** it looks for the mark. So either the remover sees the holder (and defers), or the
/// opener sees the mark (and refuses): a store is never deleted under a live instance.
enum StoreHolders {
    static let wipeSuffix = "-wipe"
    static let holderInfix = "-open."
    private static let sequence = Atomic<Int>(0)

    /// Takes a holder for the database at `path`; refuses when the store is marked for wiping.
    /// - Throws: ``StoreError`` `storeClosed` for a marked store, `cannotOpen` when the holder
    ///   file cannot be made.
    static func hold(_ path: String) throws(StoreError) -> FileLock {
        let number = sequence.add(1, ordering: .relaxed).newValue
        let url = URL(fileURLWithPath: "\(path)\(holderInfix)\(getpid()).\(number)")
        let holder: FileLock
        do { holder = try FileLock.acquire(at: url) } catch {
            throw StoreError(code: .cannotOpen, reason: "its open-holder file cannot be made: \(error)", file: path)
        }
        if access(path + wipeSuffix, F_OK) == 0 {
            release(holder)
            throw StoreError(code: .storeClosed,
                             reason: "its user was logged out in another instance of the app; the store is being wiped and cannot be opened (log in again)",
                             file: path)
        }
        return holder
    }

    /// Releases a holder and removes its file.
    static func release(_ holder: FileLock) {
        unlink(holder.url.path)
        holder.unlock()
    }

    /// Whether the database at `path` is marked for wiping.
    static func isWipePending(_ path: String) -> Bool { access(path + wipeSuffix, F_OK) == 0 }

    /// Deletes the store folder `directory` (holding `store.sqlite`) unless another instance holds
    /// it open: then it is marked for wiping and left whole.
    /// - Returns: The process ids of the live holders (empty: removed). A holder whose process
    ///   cannot be named counts as 0.
    static func removeStoreFolder(_ directory: URL) throws(StoreError) -> [Int32] {
        let database = directory.appendingPathComponent("store.sqlite").path
        let mark = open(database + wipeSuffix, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o600)
        if mark >= 0 { close(mark) }
        let holderPrefix = "store.sqlite" + holderInfix
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        var live: [Int32] = []
        for name in names where name.hasPrefix(holderPrefix) {
            let url = directory.appendingPathComponent(name)
            do {
                release(try FileLock.acquire(at: url))   // nobody held it: a dead process's
            } catch {
                // Held by a live instance — or unusable (a symlink): never delete under it.
                if case .held(let process) = error.reason { live.append(process ?? 0) } else { live.append(0) }
            }
        }
        guard live.isEmpty else { return live }
        try remove(directory)
        return []
    }

    /// Deletes every store folder under an owner's `stores` directory that no other instance
    /// holds open (marking the others), then the directory itself when it is empty.
    static func removeStores(under directory: URL) throws(StoreError) -> [Int32] {
        guard FileManager.default.fileExists(atPath: directory.path) else { return [] }
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        var live: [Int32] = []
        for name in names.sorted() {
            var isDirectory: ObjCBool = false
            let folder = directory.appendingPathComponent(name)
            guard FileManager.default.fileExists(atPath: folder.path, isDirectory: &isDirectory), isDirectory.boolValue else { continue }
            live += try removeStoreFolder(folder)
        }
        guard live.isEmpty else { return live }
        try remove(directory)
        return []
    }

    private static func remove(_ directory: URL) throws(StoreError) {
        guard FileManager.default.fileExists(atPath: directory.path) else { return }
        do { try FileManager.default.removeItem(at: directory) } catch {
            throw StoreError(code: .cannotOpen, reason: "cannot be removed: \(error.localizedDescription)", file: directory.path)
        }
    }
}

extension StoreManager {
    /// Whether another instance of the app logged the owner out and left the store marked for
    /// wiping (see ``removeStores(for:)``): it must not be handed out.
    public func isWipePending(named name: String = SmartStore.defaultStoreName, for owner: StoreOwner) -> Bool {
        guard let url = try? databaseURL(named: name, for: owner) else { return false }
        return StoreHolders.isWipePending(url.path)
    }
}

/// What ``StoreManager/removeStores(for:)`` did.
public enum StoreRemoval: Sendable, Hashable {
    /// The owner's stores were closed and deleted.
    case removed
    /// Another instance of the app (these process ids; 0 when unknown) has some of them open:
    /// those were marked for wiping and left whole — the other instance finishes the wipe once
    /// it learns of the logout. The rest were deleted.
    case pending(holders: [Int32])
}
