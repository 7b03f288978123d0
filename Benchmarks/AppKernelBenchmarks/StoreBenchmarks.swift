import AppKernelCore
import AppKernelStore
import CSQLite
import Foundation

/// SmartStore on this machine's SQLite, release build, each figure interleaved with what it is
/// compared to (see ``Measure``):
///
/// 1. **upsert**: N small entries (4 fields, 3 indexed) into a fresh soup in one `upsert` call,
///    against the same rows inserted through the raw SQLite C API in one transaction — same
///    file layout (WAL, `synchronous = FULL`), same table, columns and five indexes, one prepared
///    INSERT, each row's JSON text made before the clock starts (so the raw side does SQLite's
///    work only, and SmartStore's JSON encoding, index projection and bookkeeping are what the
///    ratio shows). Both files are new each round.
/// 2. **queries** over N entries: an exact query on an integer index and a range query on
///    another, 100 rows each (page size 100), through `query` (the writer connection, entries
///    decoded from JSON), and the exact one through `queryConcurrently` (the reader connection
///    and the hop to its queue and back).
/// 3. **Smart SQL join** of two 10,000-entry soups on an indexed path, all 10,000 rows returned
///    (two strings each).
@MainActor
enum StoreBenchmarks {
    /// Runs the section, prints its tables and returns its targets.
    static func run(quick: Bool) async throws -> [(String, Bool)] {
        let count = quick ? 10_000 : 100_000
        let rounds = quick ? 3 : 7
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("store-bench-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        print("SmartStore (SQLite \(String(cString: sqlite3_libversion())), WAL, synchronous = FULL; \(rounds) interleaved rounds; min / median)"
              + (quick ? " (quick run: 10k entries instead of 100k)" : ""))

        // 1. Upsert against raw inserts.
        let entries = (0..<count).map(entry)
        let upsertFile = directory.appendingPathComponent("upsert.sqlite"), rawFile = directory.appendingPathComponent("raw.sqlite")
        let timings = try Measure.interleaved(rounds: rounds, [
            { @MainActor () throws -> Double in
                removeDatabase(upsertFile)
                let store = try SmartStore(fileURL: upsertFile)
                defer { store.close() }
                try store.registerSoup(soup)
                return try Measure.time { try store.upsert(entries, intoSoup: soup.name) }
            },
            { @MainActor () throws -> Double in
                removeDatabase(rawFile)
                return try RawInserts(path: rawFile.path, count: count).run()
            },
        ])
        let upsert = Stats(timings[0]), raw = Stats(timings[1])
        let ratio = upsert.ratio(to: raw)
        print(AppKernelBenchmarks.table(
            title: "  upsert of \(Format.count(count)) small entries (3 indexed paths) in one call, against raw SQLite inserts in one transaction",
            header: ["", "total", "per entry"],
            rows: [Row(name: "  SmartStore upsert", values: [Format.time(upsert), Format.time(upsert.map { $0 / Double(count) })]),
                   Row(name: "  raw C API, JSON text ready", values: [Format.time(raw), Format.time(raw.map { $0 / Double(count) })])]))
        print(String(format: "    SmartStore / raw (median of per-round ratios): %.2f×", ratio.median))

        // 2. Indexed queries returning 100 rows over `count` entries.
        let queryFile = directory.appendingPathComponent("query.sqlite")
        let store = try SmartStore(fileURL: queryFile)
        defer { store.close() }
        try store.registerSoup(soup)
        try store.upsert(entries, intoSoup: soup.name)
        let queries = 50
        let groups = count / 100
        let rows = RowCounts()
        // Interleaved by hand (Measure's rounds take one kind of body): a warm-up round, then
        // each round runs the three, in turn.
        var samples: [[Double]] = [[], [], []]
        for round in 0...rounds {
            let exactTime = try Measure.time {
                for query in 0..<queries {
                    rows.exact = try store.query(.exact(soupName: soup.name, path: "Group", matchKey: .int(query * 37 % groups), pageSize: 100)).count
                }
            }
            let rangeTime = try Measure.time {
                for query in 0..<queries {
                    let begin = query * 997 % (count - 100)
                    rows.range = try store.query(.range(soupName: soup.name, path: "Employees", beginKey: .int(begin), endKey: .int(begin + 99), pageSize: 100)).count
                }
            }
            let asyncTime = try await Measure.time {
                for query in 0..<queries {
                    _ = try await store.queryConcurrently(.exact(soupName: soup.name, path: "Group", matchKey: .int(query * 37 % groups), pageSize: 100))
                }
            }
            guard round > 0 else { continue }
            for (index, time) in [exactTime, rangeTime, asyncTime].enumerated() { samples[index].append(time / Double(queries)) }
        }
        let exact = Stats(samples[0]), range = Stats(samples[1]), asyncTimes = Stats(samples[2])
        print(AppKernelBenchmarks.table(
            title: "  queries over \(Format.count(count)) entries, page size 100 (per query, each returning \(rows.exact) / \(rows.range) entries)",
            header: ["", "per query"],
            rows: [Row(name: "  exact on an integer index (query)", values: [Format.time(exact)]),
                   Row(name: "  range on an integer index (query)", values: [Format.time(range)]),
                   Row(name: "  exact, queryConcurrently (reader connection, queue hop)", values: [Format.time(asyncTimes)])]))

        // 3. A Smart SQL join of two 10,000-entry soups.
        let joinCount = 10_000
        try store.registerSoups([accounts, contacts])
        try store.upsert((0..<joinCount).map { ["Id": .string("001\($0)"), "Name": .string("Account \($0)"), "Industry": .string($0 % 2 == 0 ? "Tech" : "Retail")] },
                         intoSoup: accounts.name)
        try store.upsert((0..<joinCount).map { ["AccountId": .string("001\(($0 * 7) % joinCount)"), "LastName": .string("Contact \($0)")] },
                         intoSoup: contacts.name)
        let join = QuerySpec.smart("SELECT {accounts:Name}, {contacts:LastName} FROM {contacts}, {accounts} WHERE {accounts:Id} = {contacts:AccountId}",
                                   pageSize: joinCount)
        let joinTimes = Stats(try Measure.interleaved(rounds: rounds, warmUp: true, [
            { @MainActor () throws -> Double in try Measure.time { rows.join = try store.query(join).count } },
        ])[0])
        print(AppKernelBenchmarks.table(
            title: "  Smart SQL join of two 10k-entry soups on an indexed path",
            header: ["", "per query"],
            rows: [Row(name: "  \(rows.join) rows of 2 values", values: [Format.time(joinTimes)])]))
        print("")
        return [
            (String(format: "SmartStore upsert of %@ entries ≤ 1.5× raw SQLite inserts (median ratio %.2f×)", Format.count(count), ratio.median), ratio.median <= 1.5),
            (String(format: "indexed exact and range queries over %@ entries returning 100 rows < 1 ms (medians %@, %@)", Format.count(count),
                    Format.time(exact.median), Format.time(range.median)), exact.median < 0.001 && range.median < 0.001 && rows.exact == 100 && rows.range == 100),
            (String(format: "Smart SQL join of two 10k-entry soups < 20 ms (median %@)", Format.time(joinTimes.median)), joinTimes.median < 0.020 && rows.join == joinCount),
        ]
    }

    static let soup = SoupSpec(name: "entries", indexes: [IndexSpec(path: "Name", type: .string), IndexSpec(path: "Employees", type: .integer),
                                                          IndexSpec(path: "Group", type: .integer)])
    static let accounts = SoupSpec(name: "accounts", indexes: [IndexSpec(path: "Id", type: .string), IndexSpec(path: "Name", type: .string)])
    static let contacts = SoupSpec(name: "contacts", indexes: [IndexSpec(path: "AccountId", type: .string), IndexSpec(path: "LastName", type: .string)])

    /// Entry `index`: 4 fields, 3 of them indexed; `Group` has 100 entries a value.
    static func entry(_ index: Int) -> [String: JSONValue] {
        ["Name": .string("Account \(index)"), "Employees": .int(index), "Group": .int(index / 100),
         "Score": .double(Double(index) / 8)]
    }

    /// How many rows the measured queries returned (checked after the timing).
    @MainActor final class RowCounts {
        var exact = 0, range = 0, join = 0
    }

    static func removeDatabase(_ file: URL) {
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: file.path + suffix) }
    }
}

/// The raw baseline: SmartStore's table layout for the benchmark soup, filled through SQLite's C
/// API — one prepared INSERT, bound and stepped per row, inside BEGIN … COMMIT. The pointers
/// below are SQLite's handles, used on this thread only between open and close.
@MainActor
struct RawInserts {
    struct RawRow {
        var json: String
        var name: String
        var employees: Int64
        var group: Int64
    }

    let path: String
    let rows: [RawRow]
    let now = Int64(Date().timeIntervalSince1970 * 1000)

    init(path: String, count: Int) {
        self.path = path
        let now = self.now
        rows = (0..<count).map { index in
            let entry = StoreBenchmarks.entry(index)
            let group = Int64(entry["Group"]?.intValue ?? 0)
            let json = "{\"_soupEntryId\":\(index + 1),\"_soupLastModifiedDate\":\(now),\"Name\":\"Account \(index)\",\"Employees\":\(index),"
                + "\"Group\":\(group),\"Score\":\(Double(index) / 8)}"
            return RawRow(json: json, name: "Account \(index)", employees: Int64(index), group: group)
        }
    }

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// Creates the file and table (untimed), then times the inserts and the commit.
    func run() throws -> Double {
        _ = FileManager.default.createFile(atPath: path, contents: nil, attributes: [.posixPermissions: 0o600])
        var handle: OpaquePointer?
        guard sqlite3_open_v2(path, &handle, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, nil) == SQLITE_OK, let db = handle else {
            throw Failure(description: "cannot open \(path)")
        }
        defer { sqlite3_close_v2(db) }
        func exec(_ sql: String) throws {
            guard sqlite3_exec(db, sql, nil, nil, nil) == SQLITE_OK else { throw Failure(description: String(cString: sqlite3_errmsg(db))) }
        }
        try exec("""
            PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL;
            CREATE TABLE TABLE_1 (id INTEGER PRIMARY KEY AUTOINCREMENT, soup TEXT, created INTEGER, lastModified INTEGER,
                                  TABLE_1_0 TEXT, TABLE_1_1 INTEGER, TABLE_1_2 INTEGER);
            CREATE INDEX TABLE_1_created_idx ON TABLE_1 (created); CREATE INDEX TABLE_1_lastModified_idx ON TABLE_1 (lastModified);
            CREATE INDEX TABLE_1_0_idx ON TABLE_1 (TABLE_1_0); CREATE INDEX TABLE_1_1_idx ON TABLE_1 (TABLE_1_1);
            CREATE INDEX TABLE_1_2_idx ON TABLE_1 (TABLE_1_2);
            """)
        var prepared: OpaquePointer?
        guard sqlite3_prepare_v2(db, "INSERT INTO TABLE_1 (id, soup, created, lastModified, TABLE_1_0, TABLE_1_1, TABLE_1_2) VALUES (?, ?, ?, ?, ?, ?, ?)",
                                 -1, &prepared, nil) == SQLITE_OK, let insert = prepared else { throw Failure(description: String(cString: sqlite3_errmsg(db))) }
        defer { sqlite3_finalize(insert) }
        // SQLITE_TRANSIENT (SQLite copies the text), as SmartStore binds.
        let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
        return try Measure.time {
            try exec("BEGIN IMMEDIATE")
            for (offset, row) in rows.enumerated() {
                sqlite3_bind_int64(insert, 1, Int64(offset + 1))
                var json = row.json, name = row.name
                // The strings' own UTF-8 buffers, lent for the call (no copy), as SmartStore binds.
                json.withUTF8 { text in text.withMemoryRebound(to: CChar.self) { _ = sqlite3_bind_text(insert, 2, $0.baseAddress, Int32($0.count), transient) } }
                sqlite3_bind_int64(insert, 3, now)
                sqlite3_bind_int64(insert, 4, now)
                name.withUTF8 { text in text.withMemoryRebound(to: CChar.self) { _ = sqlite3_bind_text(insert, 5, $0.baseAddress, Int32($0.count), transient) } }
                sqlite3_bind_int64(insert, 6, row.employees)
                sqlite3_bind_int64(insert, 7, row.group)
                guard sqlite3_step(insert) == SQLITE_DONE else { throw Failure(description: String(cString: sqlite3_errmsg(db))) }
                sqlite3_reset(insert)
            }
            try exec("COMMIT")
        }
    }
}
