import AppKernelCore
import Dispatch

/// The committed catalog, published by the writer after each commit that changed soups, read by
/// the reader for each query.
final class CatalogBox: Sendable {
    private let value = Locked(StoreCatalog())

    /// The catalog as last committed.
    var current: StoreCatalog { value.withLock { $0 } }
    /// Its generation.
    var generation: Int { value.withLock { $0.generation } }
    /// Replaces it.
    func publish(_ catalog: StoreCatalog) { value.withLock { $0 = catalog } }
}

/// The read side of a store for async queries: a second, read-only connection, opened on first
/// use, that runs queries on a dispatch queue of its own — off the caller's actor and off Swift's
/// cooperative pool, so a long query blocks neither the main actor nor the writer (WAL lets a
/// reader and a writer run at once; the reader sees the last commit when its query starts).
/// Queries on it run one at a time, in the order asked.
final class StoreReader: Sendable {
    private struct State {
        var connection: SQLiteConnection?
        var translations = TranslationCache()
        var closed = false
    }

    private let path: String
    private let catalog: CatalogBox
    private let queryStepBudget: Int
    private let key: SmartStore.EncryptionKey?
    private let state = Locked(State())
    /// The open connection's interrupter, reachable without waiting for the state's lock.
    private let interrupter = Locked<SQLiteInterrupter?>(nil)
    private let queue = DispatchQueue(label: "AppKernelStore.reader", qos: .userInitiated)

    init(path: String, catalog: CatalogBox, queryStepBudget: Int, key: SmartStore.EncryptionKey? = nil) {
        self.path = path
        self.key = key
        self.catalog = catalog
        self.queryStepBudget = queryStepBudget
    }

    /// Closes the connection; later queries fail with `storeClosed`. A running query is
    /// interrupted first (it fails with `cancelled`).
    func close() {
        interrupter.withLock { $0?.interrupt() }
        state.withLock { state in
            state.connection?.close()
            state.connection = nil
            state.closed = true
        }
    }

    /// Runs `work` on the reader connection off the caller's thread. Cancelling the calling task
    /// interrupts the query (``StoreError/Code/cancelled``).
    func run<Result: Sendable>(_ work: @escaping @Sendable (SQLiteConnection, StoreCatalog, inout TranslationCache) throws(StoreError) -> Result)
        async throws(StoreError) -> Result {
        let job = Job()
        let outcome: Swift.Result<Result, StoreError> = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                queue.async { continuation.resume(returning: self.execute(job, work)) }
            }
        } onCancel: {
            job.cancel()
        }
        return try outcome.get()
    }

    private func execute<Result: Sendable>(_ job: Job, _ work: (SQLiteConnection, StoreCatalog, inout TranslationCache) throws(StoreError) -> Result)
        -> Swift.Result<Result, StoreError> {
        state.withLock { state -> Swift.Result<Result, StoreError> in
            guard !state.closed else { return .failure(StoreError(code: .storeClosed, reason: "the store is closed", file: path)) }
            let connection: SQLiteConnection
            if let open = state.connection {
                connection = open
            } else {
                do throws(SQLiteFailure) {
                    // The connection sets its busy timeout as it opens.
                    connection = try SQLiteConnection(path: path, readOnly: true, key: key)
                    connection.queryStepBudget = queryStepBudget
                } catch {
                    return .failure(StoreError(error, file: path))
                }
                state.connection = connection
                interrupter.withLock { $0 = connection.interrupter }
            }
            guard job.start(connection.interrupter) else {
                return .failure(StoreError(code: .cancelled, reason: "the query's task was cancelled", file: path))
            }
            defer { job.finish() }
            do throws(StoreError) {
                return .success(try work(connection, catalog.current, &state.translations))
            } catch {
                return .failure(error)
            }
        }
    }

    /// One async query's cancellation state: cancelled before it starts, it does not run;
    /// cancelled while it runs, its connection is interrupted.
    private final class Job: Sendable {
        private let state = Locked<(cancelled: Bool, running: SQLiteInterrupter?)>((false, nil))

        func cancel() {
            state.withLock { state in
                state.cancelled = true
                state.running?.interrupt()
            }
        }

        /// Marks the job running on `interrupter`'s connection; false when already cancelled.
        func start(_ interrupter: SQLiteInterrupter) -> Bool {
            state.withLock { state in
                guard !state.cancelled else { return false }
                interrupter.reset()
                state.running = interrupter
                return true
            }
        }

        func finish() {
            state.withLock { state in
                state.running?.reset()
                state.running = nil
            }
        }
    }
}
