@testable import AppKernelStore

/// Direct SQL on a database file, for tests that make files SmartStore would not write.
enum RawDatabase {
    /// Runs `sql` (several statements allowed) on the database at `path`.
    static func execute(_ sql: String, at path: String) throws {
        let connection = try SQLiteConnection(path: path, readOnly: false)
        defer { connection.close() }
        try connection.execute(sql)
    }
}
