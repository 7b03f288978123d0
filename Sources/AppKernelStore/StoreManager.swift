public import AppKernelCore
public import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Whose stores these are.
public enum StoreOwner: Sendable, Hashable, CustomStringConvertible {
    /// Shared by every user (used before anyone logs in, with deferred login).
    case global
    /// One user's.
    case user(UserAccountIdentity)

    /// `global` or the user's identity.
    public var description: String {
        switch self {
        case .global: "global"
        case .user(let identity): identity.description
        }
    }
}

/// Opens stores by name and owner under a data directory the app chooses, in the Mobile SDK's
/// layout (`SFSmartStoreDatabaseManager`):
///
/// ```
/// <root>/stores/<name>/store.sqlite                       global stores
/// <root>/<orgID>/<userID>/stores/<name>/store.sqlite      a user's stores
/// ```
///
/// (with the database's `-wal` and `-shm` files beside it). Directories it creates are 0700 and
/// databases 0600; every folder from the root down is checked as a data home's
/// (`PrivateDirectory`): a symbolic link, another user's folder or one others may write to is
/// refused (`cannotOpen`, naming the folder and the fix), never followed or `chmod`ed. A store is
/// opened once, with the manager's ``configuration``, and shared (`sharedStoreWithName:user:`)
/// until it is removed; reopened after a relaunch, it has its data. ``removeStores(for:)``
/// closes and deletes a user's stores — what logout does.
///
/// With a ``keyRing`` every store is sealed with its owner's data key (the global key for
/// global stores, `KeyRing.owner(of:)`'s for a user's; created at the first open): every page
/// of the database and its WAL is encrypted (``SmartStore/EncryptionKey``), and a plain store of
/// an earlier version is migrated on that open. Once the owner's key is destroyed (a logout's
/// crypto-shredding), whatever is left of the store is ciphertext nobody can open.
public final class StoreManager: Sendable {
    /// The data directory.
    public let root: URL
    /// What every store this manager opens is opened with (its limits, such as
    /// ``SmartStore/Configuration/queryStepBudget``).
    public let configuration: SmartStore.Configuration
    /// The data keys the stores are sealed with; `nil`: plain stores (an app without a key
    /// provider, or a test).
    public let keyRing: KeyRing?
    private let open = Locked<[Key: SmartStore]>([:])

    private struct Key: Hashable {
        var name: String
        var owner: StoreOwner
    }

    /// A manager for stores under `root` (created, 0700, when first needed), opening them with
    /// `configuration`, sealed with `keyRing`'s keys when one is given. An SDK app hands its own
    /// to `SDKManager.storeManager`.
    public init(root: URL, configuration: SmartStore.Configuration = SmartStore.Configuration(), keyRing: KeyRing? = nil) {
        self.root = root.standardizedFileURL
        self.configuration = configuration
        self.keyRing = keyRing
    }

    /// The process's managers (outside any `SharedScope`), by root and master key.
    private static let processManagers = Locked<[String: StoreManager]>([:])
    /// A scope's managers.
    private static let managersKey = SharedScope.Key<Locked<[String: StoreManager]>>("StoreManager.shared")

    /// The process's manager for `root`: one a directory (and master key), so that every caller
    /// shares its stores. With `keyRing` the stores are sealed with its keys; a caller with
    /// another master key (or none) gets a manager of its own, never one that opens the stores
    /// with a key it was not given.
    ///
    /// Inside a `SharedScope` (a test's), the scope's own manager for `root`: tests in parallel
    /// share nothing, and the stores it opened are closed when the scope finishes.
    public static func shared(root: URL, keyRing: KeyRing? = nil) -> StoreManager {
        let root = root.standardizedFileURL
        let name = root.path + "\0" + (keyRing.map { $0.directory.standardizedFileURL.path + "\0" + $0.provider.description } ?? "plain")
        let managers = SharedScope.resolve(managersKey, make: {
            let managers = Locked<[String: StoreManager]>([:])
            SharedScope.current?.onFinish {
                for manager in managers.withLock({ Array($0.values) }) { manager.closeAll() }
            }
            return managers
        }, process: { processManagers })
        return managers.withLock { managers in
            if let manager = managers[name] { return manager }
            let manager = StoreManager(root: root, keyRing: keyRing)
            managers[name] = manager
            return manager
        }
    }

    /// Closes every store this manager has open (a scope that finished); the next
    /// ``store(named:for:)`` opens them again.
    public func closeAll() {
        let stores = open.withLock { open in
            defer { open = [:] }
            return Array(open.values)
        }
        for store in stores { store.close() }
    }

    /// The directory holding the owner's stores (`<root>/stores`, `<root>/<org>/<user>/stores`).
    /// - Throws: ``StoreError`` `invalidName` for an org or user id that cannot name a directory.
    public func directory(for owner: StoreOwner) throws(StoreError) -> URL {
        switch owner {
        case .global:
            return root.appendingPathComponent("stores")
        case .user(let identity):
            try Self.checkName(identity.orgID, what: "org id")
            try Self.checkName(identity.userID, what: "user id")
            return root.appendingPathComponent(identity.orgID).appendingPathComponent(identity.userID).appendingPathComponent("stores")
        }
    }

    /// The database file of a store.
    public func databaseURL(named name: String, for owner: StoreOwner) throws(StoreError) -> URL {
        try Self.checkName(name, what: "store name")
        return try directory(for: owner).appendingPathComponent(name).appendingPathComponent("store.sqlite")
    }

    private static func checkName(_ name: String, what: String) throws(StoreError) {
        guard !name.isEmpty, name != ".", name != "..", !name.contains("/"), !name.hasPrefix("."), !name.contains("\0") else {
            throw StoreError(code: .invalidName, reason: "'\(name)' cannot be a \(what): it names a directory")
        }
    }

    /// The store `name` of `owner`, opened (and created) on first use and shared after
    /// (`sharedStoreWithName:user:`, `sharedGlobalStoreWithName:`).
    /// - Throws: ``StoreError`` as ``SmartStore/init(fileURL:configuration:key:)``, or `invalidName`.
    public func store(named name: String = SmartStore.defaultStoreName, for owner: StoreOwner) throws(StoreError) -> SmartStore {
        let url = try databaseURL(named: name, for: owner)
        return try open.withLock { (open: inout [Key: SmartStore]) throws(StoreError) -> SmartStore in
            let key = Key(name: name, owner: owner)
            if let store = open[key], !store.isClosed { return store }
            // The key first: a folder is never there without its owner's key (a launch removes
            // such folders as a logout's leftovers).
            let sealingKey = try sealingKey(for: owner, file: url)
            try makePrivateDirectories(down: url.deletingLastPathComponent())
            let store = try SmartStore(fileURL: url, configuration: configuration, key: sealingKey)
            open[key] = store
            return store
        }
    }

    /// The key `owner`'s stores are sealed with (created on the first open), `nil` without a key ring.
    private func sealingKey(for owner: StoreOwner, file: URL) throws(StoreError) -> SmartStore.EncryptionKey? {
        guard let keyRing else { return nil }
        let identity: UserAccountIdentity? = if case .user(let identity) = owner { identity } else { nil }
        do {
            return SmartStore.EncryptionKey(try keyRing.dataKey(of: identity, creatingIfMissing: true))
        } catch {
            throw StoreError(code: .wrongKey, reason: "the store's data key could not be had: \(error)", file: file.path)
        }
    }

    /// Whether the store's database exists (`persistentStoreExists:`).
    public func storeExists(named name: String, for owner: StoreOwner) -> Bool {
        guard let url = try? databaseURL(named: name, for: owner) else { return false }
        return FileManager.default.fileExists(atPath: url.path)
    }

    /// The names of the owner's stores on disk, sorted (`allStoreNames`).
    public func allStoreNames(for owner: StoreOwner) -> [String] {
        guard let directory = try? directory(for: owner),
              let names = try? FileManager.default.contentsOfDirectory(atPath: directory.path) else { return [] }
        return names.filter { storeExists(named: $0, for: owner) }.sorted()
    }

    /// Closes and deletes one store (`removeSharedStoreWithName:forUser:`): its directory and
    /// files. Later calls on a ``SmartStore`` it handed out fail with `storeClosed`. A store
    /// another instance has open is marked for wiping instead, as ``removeStores(for:)`` does.
    @discardableResult
    public func removeStore(named name: String, for owner: StoreOwner) throws(StoreError) -> StoreRemoval {
        let url = try databaseURL(named: name, for: owner)
        return try open.withLock { (open: inout [Key: SmartStore]) throws(StoreError) -> StoreRemoval in
            open.removeValue(forKey: Key(name: name, owner: owner))?.close()
            return try remove(url.deletingLastPathComponent(), StoreHolders.removeStoreFolder)
        }
    }

    /// Closes and deletes every store of the owner (`removeAllStoresForUser:`): the owner's
    /// `stores` directory. Logout calls this for the user who leaves.
    ///
    /// A store another instance of the app has open (another process on the same data home, or
    /// another manager) is not deleted under it: it is marked for wiping and left whole
    /// (``StoreRemoval/pending(holders:)``); opening it is refused from then on, and the instance
    /// that holds it finishes the wipe once it has learnt of the logout and closed it — by
    /// calling this too.
    @discardableResult
    public func removeStores(for owner: StoreOwner) throws(StoreError) -> StoreRemoval {
        let directory = try directory(for: owner)
        return try open.withLock { (open: inout [Key: SmartStore]) throws(StoreError) -> StoreRemoval in
            for key in open.keys where key.owner == owner { open.removeValue(forKey: key)?.close() }
            return try remove(directory, StoreHolders.removeStores(under:))
        }
    }

    /// Removes `directory` with `removal` — which leaves a store another instance holds marked
    /// and whole — after checking every folder down to it: nothing is removed through a link.
    private func remove(_ directory: URL, _ removal: (URL) throws(StoreError) -> [Int32]) throws(StoreError) -> StoreRemoval {
        do { guard try PrivateDirectory.check(directory, home: root) else { return .removed } } catch {
            throw StoreError(code: .cannotOpen, reason: error.description, file: error.path)
        }
        let holders = try removal(directory)
        return holders.isEmpty ? .removed : .pending(holders: holders)
    }

    /// Creates `directory` and what is missing above it `0700`, checking every folder from the
    /// root down as a data home's (`PrivateDirectory`: never a link, the user's, not writable by
    /// others) — a linked `stores/` is refused, never followed or `chmod`ed.
    private func makePrivateDirectories(down directory: URL) throws(StoreError) {
        do { try PrivateDirectory.create(directory, home: root) } catch {
            throw StoreError(code: .cannotOpen, reason: error.description, file: error.path)
        }
    }
}

extension SmartStore {
    /// The store `name` of `owner` under `root`, shared by every caller (the SDK's
    /// `sharedStoreWithName:user:`): ``StoreManager/shared(root:keyRing:)``'s, sealed with
    /// `keyRing`'s keys when one is given.
    public static func shared(withName name: String = defaultStoreName, owner: StoreOwner, in root: URL, keyRing: KeyRing? = nil) throws(StoreError) -> SmartStore {
        try StoreManager.shared(root: root, keyRing: keyRing).store(named: name, for: owner)
    }

    /// Closes and deletes the store (`removeSharedStoreWithName:forUser:`).
    public static func removeShared(withName name: String = defaultStoreName, owner: StoreOwner, in root: URL, keyRing: KeyRing? = nil) throws(StoreError) {
        try StoreManager.shared(root: root, keyRing: keyRing).removeStore(named: name, for: owner)
    }

    /// Closes and deletes every store of the owner (`removeAllStoresForUser:`); one another
    /// instance has open is marked for wiping instead (see ``StoreManager/removeStores(for:)``).
    @discardableResult
    public static func removeAllStores(for owner: StoreOwner, in root: URL, keyRing: KeyRing? = nil) throws(StoreError) -> StoreRemoval {
        try StoreManager.shared(root: root, keyRing: keyRing).removeStores(for: owner)
    }
}
