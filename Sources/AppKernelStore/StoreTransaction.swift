public import AppKernelCore

/// The store inside ``SmartStore/inTransaction(_:)``: the store's operations, run in its
/// transaction. Each operation is atomic on its own (a savepoint: one that fails is undone
/// alone); all of them commit together when the closure returns, or roll back when it throws.
/// Reads see the transaction's own writes.
///
/// It is non-copyable and lent to the closure (`borrowing`), so it cannot outlive the
/// transaction.
public struct StoreTransaction: ~Copyable {
    let engine: StoreEngine

    init(engine: StoreEngine) { self.engine = engine }

    /// ``SmartStore/registerSoup(_:)`` in the transaction.
    public func registerSoup(_ spec: SoupSpec) throws(StoreError) { try engine.registerSoup(spec) }

    /// ``SmartStore/soupExists(_:)`` in the transaction.
    public func soupExists(_ name: String) -> Bool { engine.catalog.soups[name] != nil }

    /// ``SmartStore/indexSpecs(forSoup:)`` in the transaction.
    public func indexSpecs(forSoup name: String) throws(StoreError) -> [IndexSpec] { try engine.soup(name).specs }

    /// ``SmartStore/removeSoup(_:)`` in the transaction.
    public func removeSoup(_ name: String) throws(StoreError) { try engine.removeSoup(name) }

    /// ``SmartStore/clearSoup(_:)`` in the transaction.
    public func clearSoup(_ name: String) throws(StoreError) { try engine.clearSoup(name) }

    /// ``SmartStore/alterSoup(_:indexes:reIndexData:)`` in the transaction.
    public func alterSoup(_ name: String, indexes: [IndexSpec], reIndexData: Bool = true) throws(StoreError) {
        try engine.alterSoup(name, indexes: indexes, reIndexData: reIndexData)
    }

    /// ``SmartStore/reIndexSoup(_:paths:)`` in the transaction.
    public func reIndexSoup(_ name: String, paths: [String]) throws(StoreError) { try engine.reIndexSoup(name, paths: paths) }

    /// ``SmartStore``'s upsert of objects in the transaction.
    @discardableResult
    public func upsert(_ entries: [[String: JSONValue]], intoSoup soup: String, externalIdPath: String? = nil) throws(StoreError) -> StoredEntries {
        try engine.upsert(entries, into: soup, match: Self.match(externalIdPath))
    }

    /// ``SmartStore``'s upsert of `JSONValue`s (each must be an object) in the transaction.
    @discardableResult
    public func upsert(_ entries: [JSONValue], intoSoup soup: String, externalIdPath: String? = nil) throws(StoreError) -> StoredEntries {
        try upsert(Self.objects(entries, soup: soup, file: engine.file), intoSoup: soup, externalIdPath: externalIdPath)
    }

    /// ``SmartStore/create(_:inSoup:)`` in the transaction.
    @discardableResult
    public func create(_ entries: [[String: JSONValue]], inSoup soup: String) throws(StoreError) -> StoredEntries {
        try engine.upsert(entries, into: soup, match: .none)
    }

    /// ``SmartStore/retrieve(_:fromSoup:)`` in the transaction.
    public func retrieve(_ ids: [Int], fromSoup soup: String) throws(StoreError) -> [[String: JSONValue]] {
        try engine.retrieve(ids.map(Int64.init), from: soup)
    }

    /// ``SmartStore/remove(_:fromSoup:)`` in the transaction.
    @discardableResult
    public func remove(_ ids: [Int], fromSoup soup: String) throws(StoreError) -> Int { try engine.remove(ids.map(Int64.init), from: soup) }

    /// ``SmartStore/remove(matching:fromSoup:)`` in the transaction.
    @discardableResult
    public func remove(matching spec: QuerySpec, fromSoup soup: String) throws(StoreError) -> Int { try engine.remove(matching: spec, from: soup) }

    /// ``SmartStore/query(_:pageIndex:whereArgs:)`` in the transaction (it sees the transaction's writes).
    public func query(_ spec: QuerySpec, pageIndex: Int = 0, whereArgs: [JSONValue] = []) throws(StoreError) -> [JSONValue] {
        try engine.query(spec, pageIndex: pageIndex, whereArgs: whereArgs)
    }

    /// ``SmartStore/count(_:whereArgs:)`` in the transaction.
    public func count(_ spec: QuerySpec, whereArgs: [JSONValue] = []) throws(StoreError) -> Int { try engine.count(spec, whereArgs: whereArgs) }

    /// How an upsert with this external-id path matches entries.
    static func match(_ externalIdPath: String?) -> StoreEngine.Match {
        guard let externalIdPath, externalIdPath != SoupColumns.entryIDPath else { return .entryID }
        return .externalID(externalIdPath)
    }

    /// The entries as objects.
    /// - Throws: ``StoreError`` `invalidEntry` naming the first that is not an object.
    static func objects(_ entries: [JSONValue], soup: String, file: String) throws(StoreError) -> [[String: JSONValue]] {
        var objects: [[String: JSONValue]] = []
        objects.reserveCapacity(entries.count)
        for (offset, entry) in entries.enumerated() {
            guard case .object(let members) = entry else {
                throw StoreError(code: .invalidEntry, reason: "entry \(offset) is \(entry), not a JSON object", file: file, soup: soup)
            }
            objects.append(members)
        }
        return objects
    }
}
