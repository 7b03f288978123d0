import AppKernel
import AppKernelAuth

/// The soups and syncs registered for each user — what SmartStore and MobileSync would create
/// from `userstore.json` and `usersyncs.json`. A user's logout wipes theirs.
@MainActor
public final class UserStoreRegistry {
    private var soupsByOwner: [StoreOwner: [SoupSpec]] = [:]
    private var syncsByOwner: [StoreOwner: [SyncSpec]] = [:]
    private var recordsByOwner: [StoreOwner: [String: [String: [String: JSONValue]]]] = [:]   // owner → soup → Id → record

    /// The field marking a record changed locally (MobileSync's `__local__`).
    public static let localFlag = "__local__"

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
    public func register(syncs: [SyncSpec], for owner: StoreOwner, file: String = StoreConfig.syncsFileName) throws(ConfigError) {
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

    /// Removes everything the owner has (a logout's wipe): soups, syncs and records.
    public func wipe(_ owner: StoreOwner) {
        soupsByOwner[owner] = nil
        syncsByOwner[owner] = nil
        recordsByOwner[owner] = nil
    }

    // MARK: Records

    /// The records of a soup, ordered by `Id`.
    public func records(inSoup soup: String, for owner: StoreOwner) -> [[String: JSONValue]] {
        (recordsByOwner[owner]?[soup] ?? [:]).sorted { $0.key < $1.key }.map(\.value)
    }

    /// The record with `id` in a soup.
    public func record(withID id: String, inSoup soup: String, for owner: StoreOwner) -> [String: JSONValue]? {
        recordsByOwner[owner]?[soup]?[id]
    }

    /// Inserts or replaces a record (keyed by its `Id`) in a registered soup.
    /// - Throws: `ConfigError` (`unknownSoup`) when the soup is not registered for the owner,
    ///   or (`missingKey`) for a record without an `Id`.
    public func upsert(_ record: [String: JSONValue], intoSoup soup: String, for owner: StoreOwner) throws(ConfigError) {
        guard soups(for: owner).contains(where: { $0.name == soup }) else {
            throw ConfigError(code: .unknownSoup, file: StoreConfig.soupsFileName, keyPath: soup, reason: "the soup '\(soup)' is not registered for \(owner)")
        }
        guard let id = record["Id"]?.stringValue else {
            throw ConfigError(code: .missingKey, file: StoreConfig.soupsFileName, keyPath: "\(soup).Id", reason: "a record needs an Id")
        }
        recordsByOwner[owner, default: [:]][soup, default: [:]][id] = record
    }

    /// Changes fields of a stored record locally and flags it (`__local__`), as an app edit does.
    public func updateLocally(id: String, inSoup soup: String, for owner: StoreOwner, fields: [String: JSONValue]) throws(ConfigError) {
        guard var record = record(withID: id, inSoup: soup, for: owner) else {
            throw ConfigError(code: .invalidValue, file: StoreConfig.soupsFileName, keyPath: "\(soup).\(id)", reason: "no such record")
        }
        record.merge(fields) { _, new in new }
        record[Self.localFlag] = true
        try upsert(record, intoSoup: soup, for: owner)
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
