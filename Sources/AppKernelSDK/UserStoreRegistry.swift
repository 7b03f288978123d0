import AppKernelCore
import AppKernelStore
import AppKernelSync

/// The soups and syncs registered for each user — what SmartStore and MobileSync would create
/// from `userstore.json` and `usersyncs.json`. A user's logout wipes theirs.
@MainActor
public final class UserStoreRegistry {
    private var soupsByOwner: [StoreOwner: [SoupSpec]] = [:]
    private var syncsByOwner: [StoreOwner: [SyncSpec]] = [:]

    /// Creates an empty registry.
    public init() {}

    /// The owner's soups, in registration order.
    public func soups(for owner: StoreOwner) -> [SoupSpec] { soupsByOwner[owner] ?? [] }
    /// The owner's syncs, in registration order.
    public func syncs(for owner: StoreOwner) -> [SyncSpec] { syncsByOwner[owner] ?? [] }
    /// Every owner with soups or syncs.
    public var owners: Set<StoreOwner> { Set(soupsByOwner.keys).union(syncsByOwner.keys) }

    /// Registers soups, all or none: a soup already registered under the same name for this
    /// owner is skipped when identical, and an error when different.
    /// - Throws: `ConfigError` (`duplicateName`) naming the soup; nothing is registered then.
    public func register(soups: [SoupSpec], for owner: StoreOwner, file: String = StoreConfig.soupsFileName) throws(ConfigError) {
        soupsByOwner[owner] = try Self.merge(soups, into: self.soups(for: owner), name: \.name, kind: "soup",
                                             keyPath: { "soups[\($0)].soupName" }, owner: owner, file: file)
    }

    /// Registers syncs, all or none, like ``register(soups:for:file:)``; each sync's soup must be
    /// registered for the owner.
    public func register(syncs: [SyncSpec], for owner: StoreOwner, file: String = SyncConfig.syncsFileName) throws(ConfigError) {
        let soupNames = Set(soups(for: owner).map(\.name))
        for (index, sync) in syncs.enumerated() where !soupNames.contains(sync.soupName) {
            throw ConfigError(code: .unknownSoup, file: file, keyPath: "syncs[\(index)].soupName",
                              reason: "the soup '\(sync.soupName)' is not registered for \(owner)")
        }
        syncsByOwner[owner] = try Self.merge(syncs, into: self.syncs(for: owner), name: \.name, kind: "sync",
                                             keyPath: { "syncs[\($0)].syncName" }, owner: owner, file: file)
    }

    /// Adds `new` to `existing`: an identical entry of the same name is skipped, a different one
    /// is an error (and nothing is added).
    private static func merge<Spec: Equatable>(_ new: [Spec], into existing: [Spec], name: KeyPath<Spec, String>, kind: String,
                                               keyPath: (Int) -> String, owner: StoreOwner, file: String) throws(ConfigError) -> [Spec] {
        var merged = existing
        for (index, spec) in new.enumerated() {
            if let registered = merged.first(where: { $0[keyPath: name] == spec[keyPath: name] }) {
                guard registered == spec else {
                    throw ConfigError(code: .duplicateName, file: file, keyPath: keyPath(index),
                                      reason: "the \(kind) '\(spec[keyPath: name])' is already registered for \(owner) differently")
                }
                continue
            }
            merged.append(spec)
        }
        return merged
    }

    /// Removes everything the owner has (a logout's wipe): soups and syncs.
    public func wipe(_ owner: StoreOwner) {
        soupsByOwner[owner] = nil
        syncsByOwner[owner] = nil
    }

    /// The whole registry, to put back if a launch fails after changing it.
    struct Snapshot {
        let soups: [StoreOwner: [SoupSpec]]
        let syncs: [StoreOwner: [SyncSpec]]
    }

    var snapshot: Snapshot { Snapshot(soups: soupsByOwner, syncs: syncsByOwner) }

    func restore(_ snapshot: Snapshot) {
        soupsByOwner = snapshot.soups
        syncsByOwner = snapshot.syncs
    }
}
