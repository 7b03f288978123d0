public import AppKernelCore
#if canImport(CSQLiteVFS)
import CSQLiteVFS
#endif
public import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A SmartStore — the Mobile SDK's `SFSmartStore` on SQLite: soups of JSON entries with indexed
/// paths, queried by ``QuerySpec`` (exact, range, like, full-text match, Smart SQL).
///
/// ```swift
/// let store = try SmartStore.shared(withName: "defaultStore", owner: .user(identity), in: dataDirectory)
/// try store.registerSoup(SoupSpec(name: "accounts", indexes: [IndexSpec(path: "Name", type: .string)]))
/// let saved = try store.upsert([["Name": "Acme", "Id": "001A"]], intoSoup: "accounts")
/// let found = try store.query(.exact(soupName: "accounts", path: "Name", matchKey: "Acme"))
/// ```
///
/// ## Files
/// One SQLite database a store (`store.sqlite`), in WAL mode with `synchronous = FULL` (a commit
/// is durable when the call returns); ``StoreManager`` lays stores out per owner. The file is
/// created with mode 0600 before SQLite opens it, and SQLite gives its `-wal` and `-shm` files the
/// database's mode. The database has the SDK's tables: `soup_attrs` (one row a soup; soup `n`'s
/// entries live in `TABLE_n`), `soup_index_map` (one row an index: path, column, type),
/// `TABLE_n (id, soup, created, lastModified, TABLE_n_0, …)` with an index per index column, and
/// `TABLE_n_fts` (FTS5) for `full_text` indexes. A file that is not a database, or a database of
/// another program's, is refused with a ``StoreError`` and left untouched. Opened with an
/// ``EncryptionKey``, the store is sealed: every page of the database, its WAL (`-swal`) and
/// journal (`-sjournal`) encrypted with AES-256-GCM (see "Sealed store pages"); a plain store
/// is sealed in place on its first open with a key.
///
/// ## Entries
/// JSON objects (`[String: JSONValue]`). The store adds `_soupEntryId` (an `Int`, never reused in
/// a soup) and `_soupLastModifiedDate` (milliseconds since 1970) to each; `upsert(_:intoSoup:externalIdPath:)`
/// updates the entry with the given `_soupEntryId`, or with the same value at an external-id
/// path. MobileSync's flags are plain fields: `__local__`, `__locally_created__`,
/// `__locally_updated__`, `__locally_deleted__` (JSON Booleans). Index `__local__` (any type) to
/// query them fast: `QuerySpec.exact(soupName: s, path: "__local__", matchKey: true)`, or in Smart
/// SQL `{s:__local__} = 1` — an indexed `true` is stored as 1, as SQLite's `json_extract` reads it.
///
/// ## Transactions
/// Every write is one transaction: an upsert of many entries lands whole or not at all, and a
/// process killed mid-write leaves the last committed state (SQLite's WAL). ``inTransaction(_:)``
/// runs several operations in one transaction (MobileSync writes a page of records and its sync
/// state together); an operation that fails inside it is undone alone (a savepoint), and an
/// error out of the closure rolls everything back.
///
/// ## Threading
/// `SmartStore` is `Sendable`: any thread or actor may use it, and its methods are synchronous,
/// as the SDK's are. Behind it are two SQLite connections to the same WAL database:
/// - **the writer**, behind a lock (an `NSLock`, which ThreadSanitizer models): every synchronous method — writes and reads alike — takes
///   the mutex for its duration, so there is one writer at a time and a synchronous read sees
///   every write before it. Calls from the main actor block it for as long as the operation runs
///   (fine for the SDK-sized operations apps make; use the async queries for long reads).
///   Calling the store's own methods inside ``inTransaction(_:)``'s closure, on the same thread,
///   is refused with ``StoreError/Code/nestedTransaction`` rather than deadlocking: use the
///   transaction's methods there.
/// - **the reader**, read-only, opened on the first async query:
///   ``queryConcurrently(_:pageIndex:whereArgs:)`` and ``countConcurrently(_:whereArgs:)`` run on
///   a dispatch queue of its own, off the caller's actor and off Swift's cooperative pool, one
///   query at a time. WAL lets it read while the writer writes: a long query blocks neither the
///   main actor nor writers, and sees the database as last committed when it starts (not the
///   writes of a transaction still open). Cancelling the awaiting task interrupts the query.
///
/// Soup metadata (names, indexes) is cached in memory: the writer keeps its own copy, changed
/// inside its transactions and restored if they roll back, and publishes it to the reader after
/// each commit.
public final class SmartStore: Sendable {
    /// The SDK's default store name.
    public static let defaultStoreName = "defaultStore"

    /// The database file.
    public let fileURL: URL
    /// The writer engine; nil once closed.
    private let writer: Locked<StoreEngine?>
    /// The thread inside ``inTransaction(_:)``'s closure, to refuse re-entry (0: none).
    private let transactionThread = Atomic<UInt>(0)
    /// Set by ``close()``, readable without the writer's mutex.
    private let closed = Atomic<Bool>(false)
    private let catalog: CatalogBox
    private let reader: StoreReader
    /// This open store's holder: tells other instances of the app that it is open (see
    /// ``StoreManager/removeStores(for:)``); released by ``close()``.
    private let holder: FileLock

    /// The limits the store was opened with.
    public let configuration: Configuration
    /// Whether the store is sealed: opened with an ``EncryptionKey``, every page of its database,
    /// WAL and journal encrypted.
    public let isSealed: Bool

    /// Opens (creating if needed) the store whose database is `fileURL`. Its directory must exist;
    /// a new file is created with mode 0600 (an existing one is set to 0600).
    /// - Parameters:
    ///   - fileURL: The database file.
    ///   - configuration: The store's limits (``Configuration/queryStepBudget``).
    ///   - key: The key of a sealed store (every page encrypted, see "Sealed store pages"); nil
    ///     for a plain SQLite store. A new file opened with a key becomes a sealed store.
    /// While open, the store holds a lock on a holder file beside the database
    /// (`store.sqlite-open.<pid>.<n>`), so that a logout in another instance of the app never
    /// deletes it under this one (``StoreManager/removeStores(for:)``).
    /// - Throws: ``StoreError``: `cannotOpen` (no directory, no permission), `corruptDatabase`
    ///   (not a SQLite database, damaged), `foreignDatabase` (another program's database),
    ///   `storeClosed` (its user logged out in another instance, which left it marked for wiping),
    ///   `wrongKey` (a sealed store opened with another key, or without one; the file untouched).
    public init(fileURL: URL, configuration: Configuration = Configuration(), key: EncryptionKey? = nil) throws(StoreError) {
        self.fileURL = fileURL
        self.configuration = configuration
        isSealed = key != nil
        let path = fileURL.path
        let holder = try StoreHolders.hold(path)
        do {
            try createPrivateFile(path)
            try checkSealing(path, key: key)
            let catalog = CatalogBox()
            self.catalog = catalog
            writer = Locked(try StoreEngine(path: path, published: catalog, queryStepBudget: configuration.queryStepBudget, key: key))
            reader = StoreReader(path: path, catalog: catalog, queryStepBudget: configuration.queryStepBudget, key: key)
        } catch {
            StoreHolders.release(holder)
            throw error
        }
        self.holder = holder
    }

    deinit { close() }

    /// Closes the store's connections (waiting for a running operation); every later call fails
    /// with ``StoreError/Code/storeClosed``. Idempotent.
    public func close() {
        closed.store(true, ordering: .releasing)
        reader.close()
        writer.withLock { engine in
            engine?.close()
            engine = nil
        }
        StoreHolders.release(holder)
    }

    /// Whether another instance of the app logged this store's owner out and left the store
    /// marked for wiping: stop using it (the SDK manager closes and wipes it when it learns of
    /// the logout).
    public var isWipePending: Bool { StoreHolders.isWipePending(fileURL.path) }

    /// Whether ``close()`` was called.
    public var isClosed: Bool { closed.load(ordering: .acquiring) }

    /// Runs `body` with the writer engine, under the writer mutex.
    func withEngine<Result: Sendable>(_ body: (StoreEngine) throws(StoreError) -> Result) throws(StoreError) -> Result {
        guard transactionThread.load(ordering: .acquiring) != Self.currentThread else {
            throw StoreError(code: .nestedTransaction, reason: "the store's methods were called inside its inTransaction closure; use the transaction's",
                             file: fileURL.path)
        }
        return try writer.withLock { (engine: inout StoreEngine?) throws(StoreError) -> Result in
            guard let engine else { throw StoreError(code: .storeClosed, reason: "the store is closed", file: fileURL.path) }
            return try body(engine)
        }
    }

    private static var currentThread: UInt {
        #if canImport(Darwin)
        UInt(bitPattern: pthread_self())
        #else
        UInt(pthread_self())
        #endif
    }

    // MARK: Transactions

    /// Runs `body` in one transaction: everything it does through the transaction commits
    /// together, or — if it throws — nothing does. An operation that fails inside is undone alone
    /// (the closure may catch its error and go on). Nested calls on the transaction are atomic
    /// too. Other threads' calls wait for the transaction (the writer mutex is held throughout).
    ///
    /// ```swift
    /// try store.inTransaction { tx in
    ///     try tx.upsert(records, intoSoup: "accounts")
    ///     try tx.upsert([syncState], intoSoup: "syncs_soup")
    /// }
    /// ```
    /// - Throws: what `body` threw (after rolling back), or a ``StoreError`` from beginning or
    ///   committing.
    public func inTransaction<Result>(_ body: (borrowing StoreTransaction) throws -> Result) throws -> Result {
        let thread = Self.currentThread
        guard transactionThread.load(ordering: .acquiring) != thread else {
            throw StoreError(code: .nestedTransaction, reason: "inTransaction was called inside its own closure; use the transaction's methods",
                             file: fileURL.path)
        }
        var result: Result?
        try writer.withLock { (engine: inout StoreEngine?) throws in
            guard let engine else { throw StoreError(code: .storeClosed, reason: "the store is closed", file: fileURL.path) }
            transactionThread.store(thread, ordering: .releasing)
            defer { transactionThread.store(0, ordering: .releasing) }
            result = try engine.atomically { try body(StoreTransaction(engine: engine)) }
        }
        // withLock returned normally, so the closure assigned it.
        return result!
    }

    // MARK: Soups

    /// Registers a soup (`registerSoup:withIndexSpecs:`): creates its table and indexes. The same
    /// spec again (its indexes in any order) is a no-op.
    /// - Throws: ``StoreError``: `soupSpecMismatch` when a soup of that name has other indexes
    ///   (``alterSoup(_:indexes:reIndexData:)`` changes them); `invalidSoupSpec`, `invalidPath`,
    ///   `invalidName` for a spec that cannot be registered.
    public func registerSoup(_ spec: SoupSpec) throws(StoreError) {
        try withEngine { engine throws(StoreError) in try engine.registerSoup(spec) }
    }

    /// Registers several soups (`userstore.json`'s), all or none.
    public func registerSoups(_ specs: [SoupSpec]) throws(StoreError) {
        try withEngine { engine throws(StoreError) in try engine.atomic { () throws(StoreError) in for spec in specs { try engine.registerSoup(spec) } } }
    }

    /// Whether a soup of that name is registered — as last committed, so it never waits for the
    /// writer (inside ``inTransaction(_:)``, ``StoreTransaction/soupExists(_:)`` sees the
    /// transaction's own soups). False once the store is closed.
    public func soupExists(_ name: String) -> Bool {
        !isClosed && catalog.current.soups[name] != nil
    }

    /// The registered soups' names, sorted.
    public func allSoupNames() throws(StoreError) -> [String] {
        try withEngine { engine in engine.catalog.soups.keys.sorted() }
    }

    /// A soup's indexes, in registration order (`indicesForSoup:`).
    /// - Throws: ``StoreError`` `unknownSoup`.
    public func indexSpecs(forSoup name: String) throws(StoreError) -> [IndexSpec] {
        try withEngine { engine throws(StoreError) in try engine.soup(name).specs }
    }

    /// Drops a soup and its entries; no-op for an unknown soup.
    public func removeSoup(_ name: String) throws(StoreError) {
        try withEngine { engine throws(StoreError) in try engine.removeSoup(name) }
    }

    /// Drops every soup.
    public func removeAllSoups() throws(StoreError) {
        try withEngine { engine throws(StoreError) in
            try engine.atomic { () throws(StoreError) in for name in engine.catalog.soups.keys { try engine.removeSoup(name) } }
        }
    }

    /// Removes every entry of a soup, keeping the soup (ids are not reused).
    /// - Throws: ``StoreError`` `unknownSoup`.
    public func clearSoup(_ name: String) throws(StoreError) {
        try withEngine { engine throws(StoreError) in try engine.clearSoup(name) }
    }

    /// Changes a soup's indexes, keeping its entries (`alterSoup:withIndexSpecs:reIndexData:`), in
    /// one transaction: values of paths indexed before with the same column type are kept, and
    /// with `reIndexData` the others are computed from the entries (without, new index columns
    /// stay empty for existing entries, as in the SDK). The same indexes again are a no-op.
    /// - Throws: ``StoreError`` `unknownSoup`, or as ``registerSoup(_:)`` for the new indexes.
    public func alterSoup(_ name: String, indexes: [IndexSpec], reIndexData: Bool = true) throws(StoreError) {
        try withEngine { engine throws(StoreError) in try engine.alterSoup(name, indexes: indexes, reIndexData: reIndexData) }
    }

    // MARK: Entries

    /// Inserts or updates entries, all or none (`upsertEntries:toSoup:withExternalIdPath:`).
    ///
    /// Without `externalIdPath`, an entry with a `_soupEntryId` updates that entry and one without
    /// is inserted. With it, an entry updates the entry with the same value at that (indexed)
    /// path, or is inserted when none has it.
    /// - Returns: The entries as stored, with `_soupEntryId` and `_soupLastModifiedDate` (built
    ///   when read; ``StoredEntries/soupEntryIds`` has the ids alone).
    /// - Throws: ``StoreError``: `unknownSoup`; `unknownEntry` (a `_soupEntryId` the soup does not
    ///   have); `duplicateExternalId` (several entries have the value); `missingExternalId`;
    ///   `unindexedPath` (the external-id path has no index); `invalidEntry`.
    @discardableResult
    public func upsert(_ entries: [[String: JSONValue]], intoSoup soup: String, externalIdPath: String? = nil) throws(StoreError) -> StoredEntries {
        try withEngine { engine throws(StoreError) in try engine.upsert(entries, into: soup, match: StoreTransaction.match(externalIdPath)) }
    }

    /// `upsert(_:intoSoup:externalIdPath:)` for entries given as `JSONValue`s.
    /// - Throws: ``StoreError`` `invalidEntry` naming the first entry that is not a JSON object
    ///   (nothing is written), or as the other upsert.
    @discardableResult
    public func upsert(_ entries: [JSONValue], intoSoup soup: String, externalIdPath: String? = nil) throws(StoreError) -> StoredEntries {
        let objects = try StoreTransaction.objects(entries, soup: soup, file: fileURL.path)
        return try upsert(objects, intoSoup: soup, externalIdPath: externalIdPath)
    }

    /// Inserts entries as new ones, all or none: any `_soupEntryId` they carry is replaced by a
    /// new id (Android's `create`).
    @discardableResult
    public func create(_ entries: [[String: JSONValue]], inSoup soup: String) throws(StoreError) -> StoredEntries {
        try withEngine { engine throws(StoreError) in try engine.upsert(entries, into: soup, match: .none) }
    }

    /// The entries with these ids that exist, by id (`retrieveEntries:fromSoup:`).
    /// - Throws: ``StoreError`` `unknownSoup`.
    public func retrieve(_ ids: [Int], fromSoup soup: String) throws(StoreError) -> [[String: JSONValue]] {
        try withEngine { engine throws(StoreError) in try engine.retrieve(ids.map(Int64.init), from: soup) }
    }

    /// Removes the entries with these ids (`removeEntries:fromSoup:`).
    /// - Returns: How many there were.
    @discardableResult
    public func remove(_ ids: [Int], fromSoup soup: String) throws(StoreError) -> Int {
        try withEngine { engine throws(StoreError) in try engine.remove(ids.map(Int64.init), from: soup) }
    }

    /// Removes the entries of a query's first page — up to its page size, as in the SDK
    /// (`removeEntriesByQuery:fromSoup:`); a Smart SQL query must select `{soup:_soupEntryId}`.
    /// - Returns: How many were removed.
    @discardableResult
    public func remove(matching spec: QuerySpec, fromSoup soup: String) throws(StoreError) -> Int {
        try withEngine { engine throws(StoreError) in try engine.remove(matching: spec, from: soup) }
    }

    // MARK: Queries

    /// A page of a query's results (`queryWithQuerySpec:pageIndex:`), on the writer connection:
    /// it sees every write made before it. See ``QuerySpec`` for what rows hold.
    /// - Parameters:
    ///   - spec: The query.
    ///   - pageIndex: Which page, from 0 (`pageSize` results a page).
    ///   - whereArgs: Values for Smart SQL's `?` parameters.
    /// - Throws: ``StoreError``: `unknownSoup`, `invalidPath`, `unindexedPath` (a match without a
    ///   full-text index), `invalidQuery`, `smartSqlError` (SQLite's message and the query).
    public func query(_ spec: QuerySpec, pageIndex: Int = 0, whereArgs: [JSONValue] = []) throws(StoreError) -> [JSONValue] {
        try withEngine { engine throws(StoreError) in try engine.query(spec, pageIndex: pageIndex, whereArgs: whereArgs) }
    }

    /// How many results a query has over all its pages (`countWithQuerySpec:`).
    public func count(_ spec: QuerySpec, whereArgs: [JSONValue] = []) throws(StoreError) -> Int {
        try withEngine { engine throws(StoreError) in try engine.count(spec, whereArgs: whereArgs) }
    }

    /// ``query(_:pageIndex:whereArgs:)`` on the read-only connection, off the caller's actor:
    /// it does not wait for writers nor make them wait, and sees the last commit when it starts.
    /// Cancelling the task interrupts it (``StoreError/Code/cancelled``).
    public func queryConcurrently(_ spec: QuerySpec, pageIndex: Int = 0, whereArgs: [JSONValue] = []) async throws(StoreError) -> [JSONValue] {
        try await reader.run { connection, catalog, translations throws(StoreError) in
            let query = try QueryCompiler(catalog: catalog, file: connection.path).select(spec, pageIndex: pageIndex, whereArgs: whereArgs,
                                                                                          translations: &translations)
            return try QueryRunner.rows(query, on: connection)
        }
    }

    /// ``count(_:whereArgs:)`` on the read-only connection, as ``queryConcurrently(_:pageIndex:whereArgs:)``.
    public func countConcurrently(_ spec: QuerySpec, whereArgs: [JSONValue] = []) async throws(StoreError) -> Int {
        try await reader.run { connection, catalog, translations throws(StoreError) in
            let query = try QueryCompiler(catalog: catalog, file: connection.path).count(spec, whereArgs: whereArgs, translations: &translations)
            return try QueryRunner.integer(query, on: connection)
        }
    }

    // MARK: Files

    /// The database's size in bytes (`getDatabaseSize`), its WAL included (a sealed store's WAL
    /// is `-swal`).
    public var databaseSize: Int {
        [fileURL.path, fileURL.path + (isSealed ? "-swal" : "-wal")].reduce(0) { total, path in
            total + ((try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0)
        }
    }
}

/// Before SQLite reads the file: refuses a sealed store opened without a key, and seals a plain
/// one opened with a key (the migration of an earlier version's store; DocC "Sealed store pages"),
/// after clearing what a migration killed midway left.
private func checkSealing(_ path: String, key: SmartStore.EncryptionKey?) throws(StoreError) {
    #if !canImport(CSQLiteVFS)
    if key != nil { throw StoreError(code: .wrongKey, reason: "sealed stores need the system's libcrypto, which this platform's build lacks", file: path) }
    #else
    if key != nil, ak_sealed_recover(path) != 0 {
        throw StoreError(code: .cannotOpen, reason: "cannot clear an interrupted migration's files (\(path).sealing, \(path).plain-old): "
                         + String(cString: strerror(errno)), file: path)
    }
    switch ak_sealed_probe(path, nil) {
    case AK_PROBE_SEALED_UNCHECKED where key == nil:
        throw StoreError(code: .wrongKey, reason: "a sealed (encrypted) store opened without a key: open it with its key; nothing was read or written",
                         file: path)
    case AK_PROBE_PLAINTEXT:
        guard let key else { return }
        var message = [CChar](repeating: 0, count: 512)
        let status = key.withBytes { ak_sealed_migrate(path, $0, SQLiteConnection.busyTimeoutMilliseconds, &message, message.count) }
        guard status == 0 else {
            throw StoreError(code: .cannotOpen, reason: "a plain store opened with a key could not be sealed: "
                             + String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self) + "; it is left as it was",
                             file: path)
        }
    default:
        return
    }
    #endif
}

/// Creates a store's database file with mode 0600 before SQLite opens it (SQLite would create it
/// with 0644 less the umask, and gives `-wal`/`-shm` the database's mode).
private func createPrivateFile(_ path: String) throws(StoreError) {
    let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
    guard descriptor >= 0 else {
        throw StoreError(code: .cannotOpen, reason: "cannot be created: \(String(cString: strerror(errno)))", file: path)
    }
    defer { close(descriptor) }
    guard fchmod(descriptor, 0o600) == 0 else {
        throw StoreError(code: .cannotOpen, reason: "cannot be made private: \(String(cString: strerror(errno)))", file: path)
    }
}
