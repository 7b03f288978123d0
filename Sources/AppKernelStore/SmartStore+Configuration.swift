extension SmartStore {
    /// A store's limits, given to ``SmartStore/init(fileURL:configuration:)``.
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

    /// Runs `body` with the writer's connection, under the writer mutex (tests make conditions
    /// the store's API cannot, such as a full database).
    func withWriterConnection(_ body: (SQLiteConnection) throws -> Void) throws {
        try withEngine { engine throws(StoreError) in
            do { try body(engine.connection) } catch { throw StoreError(code: .sqliteError, reason: "\(error)", file: engine.file) }
        }
    }
}
