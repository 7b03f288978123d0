// The one file of AppKernelStore that touches SQLite's C API, and so the only one with pointers:
// every `OpaquePointer`, C string and buffer of the store lives here, each unsafe construct with
// the reason it is safe beside it. Everything above this file speaks `SQLValue`, `String` and
// `[UInt8]`.
import CSQLite
import AppKernelCore
#if canImport(CSQLiteVFS)
import CSQLiteVFS
#endif
import Synchronization

/// A value as SQLite stores it.
enum SQLValue: Sendable, Hashable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    /// Text bound from UTF-8 bytes already in hand (an entry's JSON), without a `String`.
    case utf8([UInt8])
    case blob([UInt8])
}

/// A failed SQLite call: its extended result code and message.
struct SQLiteFailure: Error, Sendable {
    /// The extended result code (`SQLITE_NOTADB`, `SQLITE_CONSTRAINT_UNIQUE`…).
    var code: Int32
    /// `sqlite3_errmsg`'s text.
    var message: String
    /// The OS error (`errno`) behind an I/O failure (`sqlite3_system_errno`), 0 when none.
    var systemErrno: Int32 = 0
    /// Whether the failure is a sealed store that the connection's key does not open (SQLite
    /// sees `SQLITE_NOTADB`; the sealed VFS's probe tells a wrong key from a damaged file).
    var wrongKey = false
    /// The primary result code (the low byte of the extended one).
    var primary: Int32 { code & 0xFF }
}

/// One SQLite connection (`sqlite3*`), used by one thread at a time: its owner (the store's
/// writer or reader state) keeps it behind a `Locked`. Prepared statements are cached by their SQL
/// text and reused; ``close()`` (or deinit) finalizes them and closes the connection.
final class SQLiteConnection {
    /// `sqlite3*`. Safe to hold: it is created by `sqlite3_open_v2` in `init`, used only while the
    /// connection is open (`isOpen` is checked by every entry point), and closed exactly once.
    private var handle: OpaquePointer?
    private var statements: [String: SQLiteStatement] = [:]
    /// Lets another thread interrupt what this connection runs.
    let interrupter: SQLiteInterrupter
    /// The database file's path.
    let path: String
    /// The virtual-machine steps each query may run (``SmartStore/Configuration/queryStepBudget``),
    /// enforced by the query runner through the interrupter.
    var queryStepBudget = Int.max

    /// The key of a sealed store (its pages encrypted by the sealed VFS), nil for a plain one.
    private let key: SmartStore.EncryptionKey?

    /// Opens the database at `path` (which must exist unless `create`), read-write or read-only,
    /// in SQLite's multi-thread mode (`NOMUTEX`: the owner serializes every use) — through the
    /// sealed VFS with `key` when one is given.
    init(path: String, readOnly: Bool, key: SmartStore.EncryptionKey? = nil) throws(SQLiteFailure) {
        self.path = path
        self.key = key
        var db: OpaquePointer?
        let flags = (readOnly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE) | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_EXRESCODE
        // `path` is bridged to a NUL-terminated C string that lives for the call; SQLite copies it,
        // and the sealed VFS copies the key the pointer lends for the call.
        #if canImport(CSQLiteVFS)
        let status = if let key {
            key.withBytes { ak_sealed_open(path, $0, flags, Self.busyTimeoutMilliseconds, &db) }
        } else {
            sqlite3_open_v2(path, &db, flags, nil)
        }
        #else
        guard key == nil else { throw SQLiteFailure(code: SQLITE_CANTOPEN, message: "sealed stores need the system's libcrypto (Linux)") }
        let status = sqlite3_open_v2(path, &db, flags, nil)
        #endif
        guard status == SQLITE_OK, let db else {
            // A failed open still returns a handle (for its message) unless memory ran out.
            var failure = SQLiteFailure(code: db.map { sqlite3_extended_errcode($0) } ?? status,
                                        message: db.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory")
            if failure.code == SQLITE_OK { failure.code = status }
            sqlite3_close_v2(db)
            throw Self.explained(failure, path: path, key: key)
        }
        // First, before any statement (the open-time pragmas included) can meet another
        // connection's lock: wait for it rather than fail with SQLITE_BUSY at once.
        sqlite3_busy_timeout(db, Self.busyTimeoutMilliseconds)
        handle = db
        interrupter = SQLiteInterrupter()
        sqlite3_extended_result_codes(db, 1)
        // The context is the interrupter, unretained: the connection keeps it alive (a `let`) for
        // as long as the handle is open, and SQLite calls the handler only inside `sqlite3_step`
        // on this handle, so the pointer is valid whenever it is read. The closure captures
        // nothing (a C function pointer).
        sqlite3_progress_handler(db, Int32(SQLiteInterrupter.stepsPerCall), { context in
            guard let context else { return 0 }
            return Unmanaged<SQLiteInterrupter>.fromOpaque(context).takeUnretainedValue().shouldStop() ? 1 : 0
        }, Unmanaged.passUnretained(interrupter).toOpaque())
    }

    deinit { close() }

    /// How long a statement waits for another connection's lock (another store instance, another
    /// process) before failing with `SQLITE_BUSY`.
    static let busyTimeoutMilliseconds: Int32 = 5_000

    /// Whether the connection is still open.
    var isOpen: Bool { handle != nil }

    /// Finalizes every cached statement and closes the connection; later calls fail with
    /// `SQLITE_MISUSE`. Idempotent.
    func close() {
        guard let db = handle else { return }
        for statement in statements.values { statement.finalize() }
        statements.removeAll()
        handle = nil
        // `close_v2` never fails on a busy connection: statements left unfinalized (none, above)
        // would keep it alive as a zombie until they are.
        sqlite3_close_v2(db)
    }

    private func openHandle() throws(SQLiteFailure) -> OpaquePointer {
        guard let handle else { throw SQLiteFailure(code: SQLITE_MISUSE, message: "the store is closed") }
        return handle
    }

    /// The failure SQLite reports for the last call on this connection.
    fileprivate func failure(_ status: Int32) -> SQLiteFailure {
        guard let handle else { return SQLiteFailure(code: status, message: "the store is closed") }
        return Self.explained(SQLiteFailure(code: sqlite3_extended_errcode(handle), message: String(cString: sqlite3_errmsg(handle)),
                                            systemErrno: sqlite3_system_errno(handle)), path: path, key: key)
    }

    /// A sealed store's `SQLITE_NOTADB` explained by the sealed VFS's probe of the file: the
    /// wrong key, a damaged first page, or a plain database.
    private static func explained(_ failure: SQLiteFailure, path: String, key: SmartStore.EncryptionKey?) -> SQLiteFailure {
        #if canImport(CSQLiteVFS)
        guard let key, failure.primary == SQLITE_NOTADB else { return failure }
        var explained = failure
        switch key.withBytes({ ak_sealed_probe(path, $0) }) {
        case AK_PROBE_WRONG_KEY:
            explained.wrongKey = true
            explained.message = "a sealed store sealed with another key (its key check differs): the wrong key; nothing was read or written"
        case AK_PROBE_DAMAGED:
            explained.message = "a sealed store whose header or first page is damaged (it fails its authentication tag with the right key)"
        case AK_PROBE_PLAINTEXT:
            explained.message = "a plain (unencrypted) SQLite database, opened with a key"
        case AK_PROBE_FOREIGN:
            explained.message = "not a database (neither a sealed store nor SQLite)"
        default:
            break
        }
        return explained
        #else
        return failure
        #endif
    }

    /// Runs SQL that returns no rows (several statements allowed), uncached.
    func execute(_ sql: String) throws(SQLiteFailure) {
        let db = try openHandle()
        // SQLite reads the bridged C string during the call only; no error-message buffer is
        // requested (nil), so there is nothing to free.
        let status = sqlite3_exec(db, sql, nil, nil, nil)
        guard status == SQLITE_OK else { throw failure(status) }
    }

    /// A prepared statement for `sql` (one statement), from the cache when it was prepared
    /// before. The caller resets it after use (``SQLiteStatement/reset()``).
    func prepare(_ sql: String, cache: Bool = true) throws(SQLiteFailure) -> SQLiteStatement {
        if cache, let cached = statements[sql] { return cached }
        // A bounded cache: Smart SQL written with literals would otherwise grow it without end.
        if cache, statements.count >= Self.statementCacheSize { clearStatementCache() }
        let db = try openHandle()
        var statement: OpaquePointer?
        var tail: UnsafePointer<CChar>?
        // The bridged C string lives for the call; `tail` points into it, so it is read before the
        // call returns (inside this closure) and never kept.
        let (status, rest): (Int32, String) = sql.withCString { text in
            let status = sqlite3_prepare_v3(db, text, -1, cache ? UInt32(SQLITE_PREPARE_PERSISTENT) : 0, &statement, &tail)
            return (status, tail.map { String(cString: $0) } ?? "")
        }
        guard status == SQLITE_OK, let statement else {
            let failure = failure(status)
            sqlite3_finalize(statement)
            // An empty statement (only spaces or comments) prepares to nil without an error.
            throw status == SQLITE_OK ? SQLiteFailure(code: SQLITE_MISUSE, message: "no SQL statement in '\(sql)'") : failure
        }
        let prepared = SQLiteStatement(statement, connection: self, sql: sql, tail: rest)
        if cache { statements[sql] = prepared }
        return prepared
    }

    /// How many prepared statements the cache keeps.
    static let statementCacheSize = 256

    /// Forgets every cached statement (after a schema change: their SQL may name dropped columns).
    /// A statement still held by a caller stays valid and is finalized when released.
    func clearStatementCache() {
        statements.removeAll()
    }

    /// Rows changed by the last INSERT, UPDATE or DELETE.
    var changes: Int { handle.map { Int(sqlite3_changes64($0)) } ?? 0 }

    /// Whether a transaction is open (not in autocommit mode).
    var inTransaction: Bool { handle.map { sqlite3_get_autocommit($0) == 0 } ?? false }
}

/// Interrupts what a connection runs, from any thread: a flag that the connection's progress
/// handler reads every 1,000 virtual-machine steps, failing the running statement with
/// `SQLITE_INTERRUPT` once it is set. Unlike `sqlite3_interrupt`, a request made just before a
/// statement starts is not lost; it holds until ``reset()``.
///
/// It also keeps a step budget (``limitSteps(to:)``): once a statement has run more steps than
/// the budget, the handler stops it the same way and ``budgetExceeded`` tells the two apart.
final class SQLiteInterrupter: Sendable {
    /// The virtual-machine steps between two calls of the progress handler.
    static let stepsPerCall = 1_000
    private let requested = Atomic<Bool>(false)
    /// Progress-handler calls left before the budget is spent (`Int.max`: no budget).
    private let callsLeft = Atomic<Int>(.max)
    private let exceeded = Atomic<Bool>(false)

    /// Asks the connection to stop its running (or next) statement.
    func interrupt() { requested.store(true, ordering: .relaxed) }
    /// Withdraws the request, before new work.
    func reset() { requested.store(false, ordering: .relaxed) }

    /// Gives the statements run from now on `steps` virtual-machine steps in all (rounded up to
    /// the handler's 1,000), until ``removeLimit()``.
    func limitSteps(to steps: Int) {
        exceeded.store(false, ordering: .relaxed)
        callsLeft.store(steps / Self.stepsPerCall + (steps % Self.stepsPerCall == 0 ? 0 : 1), ordering: .relaxed)
    }

    /// Lifts the step budget.
    func removeLimit() { callsLeft.store(.max, ordering: .relaxed) }

    /// Whether the last statement was stopped because it spent its budget.
    var budgetExceeded: Bool { exceeded.load(ordering: .relaxed) }

    /// The progress handler's answer: stop when interrupted or when the budget is spent. Called
    /// only on the connection's thread, so the budget's read-then-write needs no exchange.
    fileprivate func shouldStop() -> Bool {
        if requested.load(ordering: .relaxed) { return true }
        let left = callsLeft.load(ordering: .relaxed)
        guard left != .max else { return false }
        guard left > 0 else {
            exceeded.store(true, ordering: .relaxed)
            return true
        }
        callsLeft.store(left - 1, ordering: .relaxed)
        return false
    }
}

/// A prepared statement (`sqlite3_stmt*`), finalized by its connection (on close, or when the
/// cache is cleared) or, when uncached, on deinit.
final class SQLiteStatement {
    /// `sqlite3_stmt*`, nil once finalized. Only used by the connection's owning thread.
    private var handle: OpaquePointer?
    /// Unowned: the connection outlives its statements (it finalizes them before closing), and
    /// an uncached statement is used and dropped within one call of its connection's owner.
    private unowned let connection: SQLiteConnection
    /// The SQL it was prepared from.
    let sql: String
    /// What followed the first statement in the SQL text (empty for one statement).
    let tail: String

    fileprivate init(_ handle: OpaquePointer, connection: SQLiteConnection, sql: String, tail: String) {
        self.handle = handle
        self.connection = connection
        self.sql = sql
        self.tail = tail
    }

    deinit { finalize() }

    fileprivate func finalize() {
        sqlite3_finalize(handle)
        handle = nil
    }

    private func live() throws(SQLiteFailure) -> OpaquePointer {
        guard let handle else { throw SQLiteFailure(code: SQLITE_MISUSE, message: "statement finalized: \(sql)") }
        return handle
    }

    /// Whether the statement only reads (`sqlite3_stmt_readonly`).
    var isReadOnly: Bool { handle.map { sqlite3_stmt_readonly($0) != 0 } ?? true }

    /// The number of parameters (`?`) it takes.
    var parameterCount: Int { handle.map { Int(sqlite3_bind_parameter_count($0)) } ?? 0 }

    /// `SQLITE_TRANSIENT`: tells SQLite to copy a bound buffer before the bind call returns, so the
    /// Swift buffer need not outlive the call. The C macro is `((sqlite3_destructor_type)-1)`, a
    /// sentinel SQLite compares against and never calls; Swift cannot import it, hence the cast.
    private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

    /// Binds `value` to parameter `index` (from 1).
    func bind(_ value: SQLValue, at index: Int32) throws(SQLiteFailure) {
        let statement = try live()
        let status: Int32
        switch value {
        case .null: status = sqlite3_bind_null(statement, index)
        case .integer(let number): status = sqlite3_bind_int64(statement, index, number)
        case .real(let number): status = sqlite3_bind_double(statement, index, number)
        case .text(var text):
            // `withUTF8` lends the string's own UTF-8 buffer (no copy for a native string).
            status = text.withUTF8 { bindText($0, statement, index) }
        case .utf8(let bytes):
            status = bytes.withUnsafeBufferPointer { bindText($0, statement, index) }
        case .blob(let bytes):
            // As for UTF-8 bytes: the buffer lives for the closure and SQLite copies it.
            status = bytes.withUnsafeBytes { sqlite3_bind_blob(statement, index, $0.baseAddress, Int32($0.count), Self.transient) }
        }
        guard status == SQLITE_OK else { throw connection.failure(status) }
    }

    /// Binds UTF-8 bytes as text. The buffer is valid for the call (the caller lends it for its
    /// closure) and SQLite copies `count` bytes before returning (transient). UInt8 and CChar have
    /// the same size and alignment, so viewing the bytes as CChar is sound. An empty buffer may
    /// have no address: it binds "" (a NULL pointer would bind NULL).
    private func bindText(_ buffer: UnsafeBufferPointer<UInt8>, _ statement: OpaquePointer, _ index: Int32) -> Int32 {
        guard let base = buffer.baseAddress, !buffer.isEmpty else { return sqlite3_bind_text(statement, index, "", 0, Self.transient) }
        return base.withMemoryRebound(to: CChar.self, capacity: buffer.count) { sqlite3_bind_text(statement, index, $0, Int32(buffer.count), Self.transient) }
    }

    /// Binds `values` to parameters 1, 2, ….
    func bind(_ values: [SQLValue]) throws(SQLiteFailure) {
        for (offset, value) in values.enumerated() { try bind(value, at: Int32(offset + 1)) }
    }

    /// Steps once: `true` when a row is ready, `false` when done.
    func step() throws(SQLiteFailure) -> Bool {
        let status = sqlite3_step(try live())
        switch status {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default: throw connection.failure(status)
        }
    }

    /// Steps to the end, for statements that return no rows.
    func run() throws(SQLiteFailure) {
        while try step() {}
    }

    /// Resets it for its next use (errors were reported by `step`). Bindings are kept: every use
    /// binds all of a statement's parameters again.
    func reset() {
        guard let handle else { return }
        sqlite3_reset(handle)
    }

    /// Binds `values`, runs `body` and resets the statement whatever happens.
    func using<Result>(_ values: [SQLValue], _ body: (SQLiteStatement) throws(SQLiteFailure) -> Result) throws(SQLiteFailure) -> Result {
        defer { reset() }
        try bind(values)
        return try body(self)
    }

    /// The number of result columns.
    var columnCount: Int { handle.map { Int(sqlite3_column_count($0)) } ?? 0 }

    /// Result column `index`'s name.
    func columnName(_ index: Int) -> String {
        // SQLite owns the returned UTF-8 string until the statement is finalized or re-prepared;
        // it is copied into a Swift String at once.
        guard let handle, let name = sqlite3_column_name(handle, Int32(index)) else { return "" }
        return String(cString: name)
    }

    /// Result column `index` of the current row as an integer.
    func int64(_ index: Int) -> Int64 { handle.map { sqlite3_column_int64($0, Int32(index)) } ?? 0 }

    /// Result column `index` of the current row as UTF-8 bytes (nil for NULL).
    func bytes(_ index: Int) -> [UInt8]? {
        guard let handle else { return nil }
        // `column_text` returns a buffer SQLite owns until the next step/reset; `column_bytes`
        // (called after it, as SQLite requires) is its length. It is copied into an array at once.
        guard let text = sqlite3_column_text(handle, Int32(index)) else { return nil }
        return Array(UnsafeBufferPointer(start: text, count: Int(sqlite3_column_bytes(handle, Int32(index)))))
    }

    /// Result column `index` of the current row.
    func value(_ index: Int) -> SQLValue {
        guard let handle else { return .null }
        let column = Int32(index)
        switch sqlite3_column_type(handle, column) {
        case SQLITE_INTEGER: return .integer(sqlite3_column_int64(handle, column))
        case SQLITE_FLOAT: return .real(sqlite3_column_double(handle, column))
        case SQLITE_TEXT:
            // As in `bytes(_:)`: SQLite's buffer, valid until the next step/reset, is decoded into
            // a String at once (no intermediate array).
            guard let text = sqlite3_column_text(handle, column) else { return .text("") }
            return .text(String(decoding: UnsafeBufferPointer(start: text, count: Int(sqlite3_column_bytes(handle, column))), as: UTF8.self))
        case SQLITE_BLOB:
            // As for text: SQLite's buffer is valid until the next step/reset and copied at once.
            let count = Int(sqlite3_column_bytes(handle, column))
            guard count > 0, let blob = sqlite3_column_blob(handle, column) else { return .blob([]) }
            return .blob(Array(UnsafeRawBufferPointer(start: blob, count: count)))
        default: return .null
        }
    }
}

/// SQLite's version and the features the store needs.
enum SQLiteLibrary {
    /// `sqlite3_libversion()`.
    static var version: String { String(cString: sqlite3_libversion()) }
}
