public import AppKernelCore
#if canImport(CSQLiteVFS)
import CSQLiteVFS
#endif

extension SmartStore {
    /// A store's limits, given to ``SmartStore/init(fileURL:configuration:key:)``.
    ///
    /// ```swift
    /// let store = try SmartStore(fileURL: url, configuration: .init(queryStepBudget: 50_000_000))
    /// ```
    public struct Configuration: Sendable, Hashable {
        /// The default ``queryStepBudget``: 1,000,000,000 SQLite virtual-machine steps, some
        /// seconds of work, far beyond what a query over an app's soups needs.
        public static let defaultQueryStepBudget = 1_000_000_000

        /// How many SQLite virtual-machine steps one query (a page, a count, the ids
        /// ``SmartStore/remove(matching:fromSoup:)`` removes) may run before it is stopped with
        /// ``StoreError/Code/queryBudgetExceeded``: what ends a Smart SQL `WITH RECURSIVE`
        /// without end or a runaway join. Counted in steps, not time, so the same query meets
        /// the same fate on any machine. `Int.max` lifts the limit.
        public var queryStepBudget: Int

        /// Creates a configuration.
        /// - Parameter queryStepBudget: The steps a query may run (at least 1).
        public init(queryStepBudget: Int = defaultQueryStepBudget) {
            self.queryStepBudget = max(1, queryStepBudget)
        }
    }

    /// The 32-byte key a sealed store's pages are encrypted with (AES-256-GCM, through the
    /// sealed SQLite VFS; the page format is in "Sealed store pages"). Give the same key to every
    /// open of the store: another key fails with ``StoreError/Code/wrongKey`` and leaves the
    /// file as it was.
    ///
    /// ```swift
    /// let key = try SmartStore.EncryptionKey(bytes: dataKey)   // 32 bytes from the key provider
    /// let store = try SmartStore(fileURL: url, key: key)
    /// ```
    ///
    /// The bytes live in memory this type allocates, apart from Swift's copy-on-write arrays, and
    /// are overwritten with zeros when the key is released; each open database file keeps its
    /// own copy, wiped when it closes.
    public final class EncryptionKey: @unchecked Sendable {
        // @unchecked: `bytes` is written once, in init, and only read after (by the C open call,
        // which copies it); deinit wipes it when no one holds the key any more.
        private let bytes: UnsafeMutableRawBufferPointer

        /// The length of a key: 32 bytes (AES-256).
        public static let byteCount = 32

        /// Copies `bytes` into a new key.
        /// - Throws: ``StoreError`` `wrongKey` when `bytes` is not 32 bytes long.
        public init(bytes: some Collection<UInt8>) throws(StoreError) {
            guard bytes.count == Self.byteCount else {
                throw StoreError(code: .wrongKey, reason: "a store key is \(Self.byteCount) bytes, this one has \(bytes.count)")
            }
            self.bytes = UnsafeMutableRawBufferPointer.allocate(byteCount: Self.byteCount, alignment: 16)
            self.bytes.copyBytes(from: bytes)
        }

        /// Copies the data key `key` (e.g. `KeyRing.dataKey(of:creatingIfMissing:)`'s) into a new
        /// store key, without a copy in a Swift array.
        public init(_ key: SecretKey) {
            bytes = UnsafeMutableRawBufferPointer.allocate(byteCount: Self.byteCount, alignment: 16)
            key.withUnsafeBytes { bytes.copyMemory(from: $0) }
        }

        deinit {
            #if canImport(CSQLiteVFS)
            ak_sealed_cleanse(bytes.baseAddress, bytes.count)   // a wipe the optimizer keeps
            #else
            bytes.initializeMemory(as: UInt8.self, repeating: 0)
            #endif
            bytes.deallocate()
        }

        /// Lends the key's bytes to `body` (the C open call, which copies them).
        func withBytes<Result>(_ body: (UnsafePointer<UInt8>) -> Result) -> Result {
            // The buffer was allocated with `byteCount` bytes and is bound to nothing else.
            body(bytes.baseAddress!.assumingMemoryBound(to: UInt8.self))
        }
    }

    /// Runs `body` with the writer's connection, under the writer mutex (tests make conditions
    /// the store's API cannot, such as a full database).
    func withWriterConnection(_ body: (SQLiteConnection) throws -> Void) throws {
        try withEngine { engine throws(StoreError) in
            do { try body(engine.connection) } catch { throw StoreError(code: .sqliteError, reason: "\(error)", file: engine.file) }
        }
    }
}
