import AppKernelCore
@testable import AppKernelStore
import Foundation
import Testing

/// Smart SQL: the translation rules, joins across soups, aggregates, parameters, paging, errors.
@Suite(.sealedAndPlain)
struct SmartSqlTests {
    /// Accounts plus three contacts at Acme 1 and one at Acme 2.
    func store(_ directory: TemporaryDirectory) throws -> SmartStore {
        let store = try Fixture.store(in: directory)
        try store.upsert([
            ["LastName": "Ada", "AccountName": "Acme 1", "Title": "CEO"],
            ["LastName": "Bob", "AccountName": "Acme 1", "Title": "CTO"],
            ["LastName": "Cy", "AccountName": "Acme 1", "Title": "VP"],
            ["LastName": "Dee", "AccountName": "Acme 2", "Title": "CEO"],
        ], intoSoup: "contacts")
        return store
    }

    @Test func aJoinAcrossTwoSoupsReturnsRowsOfValues() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try store(directory)
        let rows = try store.query(.smart("""
            SELECT {accounts:Name}, {contacts:LastName}, {contacts:Title}, {accounts:Industry}, {accounts:Owner.Name}
            FROM {accounts}, {contacts}
            WHERE {accounts:Name} = {contacts:AccountName} AND {contacts:Title} <> 'VP'
            ORDER BY {contacts:LastName}
            """, pageSize: 10))
        #expect(rows == [["Acme 1", "Ada", "CEO", "Tech", "Owner 1"], ["Acme 1", "Bob", "CTO", "Tech", "Owner 1"], ["Acme 2", "Dee", "CEO", "Tech", "Owner 2"]])
        // `{soup:_soup}` is the entry itself.
        let whole = try store.query(.smart("SELECT {contacts:_soup}, {accounts:_soupEntryId} FROM {contacts} JOIN {accounts} ON {accounts:Name} = {contacts:AccountName} WHERE {contacts:LastName} = 'Dee'"))
        #expect(whole.first?[0]?["Title"] == "CEO")
        #expect(whole.first?[0]?["_soupEntryId"] == 4)
        #expect(whole.first?[1] == 3)
    }

    @Test func aggregatesGroupAndCount() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try store(directory)
        #expect(try store.query(.smart("SELECT count(*), sum({accounts:Employees}), max({accounts:Revenue}) FROM {accounts}")) == [[10, 450, 9.5]])
        #expect(try store.query(.smart("SELECT {accounts:Industry}, count(*), avg({accounts:Employees}) FROM {accounts} GROUP BY {accounts:Industry} ORDER BY 1")) ==
                [["Retail", 5, 70.0], ["Tech", 5, 20.0]])
        #expect(try store.query(.smart("""
            SELECT {accounts:Name}, count({contacts:_soupEntryId}) FROM {accounts} LEFT JOIN {contacts} ON {contacts:AccountName} = {accounts:Name}
            GROUP BY {accounts:Name} HAVING count({contacts:_soupEntryId}) > 0 ORDER BY 2 DESC
            """)) == [["Acme 1", 3], ["Acme 2", 1]])
        #expect(try store.count(.smart("SELECT {contacts:LastName} FROM {contacts} WHERE {contacts:Title} = 'CEO'")) == 2)
    }

    @Test func parametersPagingAndDates() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try store(directory)
        let spec = QuerySpec.smart("SELECT {accounts:Name} FROM {accounts} WHERE {accounts:Employees} >= ? AND {accounts:Industry} = ? ORDER BY {accounts:Name}", pageSize: 2)
        #expect(try store.query(spec, pageIndex: 0, whereArgs: [50, "Retail"]) == [["Acme 5"], ["Acme 6"]])
        #expect(try store.query(spec, pageIndex: 2, whereArgs: [50, "Retail"]) == [["Acme 9"]])
        #expect(try store.count(spec, whereArgs: [50, "Retail"]) == 5)
        let dates = try store.query(.smart("SELECT {accounts:_soupCreatedDate} = {accounts:_soupLastModifiedDate}, {accounts:_soupLastModifiedDate} FROM {accounts} LIMIT 1"))
        #expect(dates.first?[0] == 1)
        #expect(dates.first?[1]?.intValue ?? 0 > 1_600_000_000_000)
        #expect(storeError { _ = try store.query(spec, whereArgs: [50]) }?.code == .invalidQuery, "two parameters, one value")
    }

    @Test func aliasesQuotedTextAndFullTextFollowTheSDKsRules() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try store(directory)
        // A self-join through aliases: indexed and un-indexed paths, and `_soup`.
        let pairs = try store.query(.smart("""
            SELECT a.{accounts:Name}, b.{accounts:Name}, a.{accounts:Industry}, b.{accounts:_soup}
            FROM {accounts} AS a JOIN {accounts} AS b ON a.{accounts:Employees} + 10 = b.{accounts:Employees}
            WHERE a.{accounts:Owner.Name} = 'Owner 0' ORDER BY a.{accounts:Name}
            """, pageSize: 10))
        #expect(pairs.map { [$0[0], $0[1], $0[2]] } == [["Acme 0", "Acme 1", "Tech"], ["Acme 3", "Acme 4", "Tech"], ["Acme 6", "Acme 7", "Retail"]])
        #expect(pairs.first?[3]?["Name"] == "Acme 1")
        // Inside a quoted string a reference stays text; '' is a quote.
        #expect(try store.query(.smart("SELECT '{accounts:Name}', 'it''s {contacts}' FROM {accounts} LIMIT 1")) == [["{accounts:Name}", "it's {contacts}"]])
        // After MATCH, the reference is the full-text column.
        let matched = try store.query(.smart("""
            SELECT {accounts:Name} FROM {accounts}, {accounts}_fts
            WHERE {accounts}_fts MATCH '{accounts:Description}:hardware AND {accounts:Description}:7' AND {accounts}_fts.rowid = {accounts:_soupEntryId}
            """))
        #expect(matched == [["Acme 7"]])
        let notFullText = storeError { _ = try store.query(.smart("SELECT {accounts:Name} FROM {accounts}_fts WHERE {accounts}_fts MATCH '{accounts:Name}:x'")) }
        #expect(notFullText?.code == .unindexedPath)
        #expect(notFullText?.path == "Name")
    }

    @Test func smartSqlErrorsNameTheQuery() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try store(directory)
        let syntax = "SELECT {accounts:Name} FRM {accounts}"
        let error = storeError { _ = try store.query(.smart(syntax)) }
        #expect(error?.code == .smartSqlError)
        #expect(error?.query == syntax)
        #expect(error?.reason.contains("syntax error") == true, "SQLite's message: \(error?.reason ?? "")")
        #expect(error?.description.contains(syntax) == true)
        let unknownSoup = storeError { _ = try store.query(.smart("SELECT {leads:Name} FROM {leads}")) }
        #expect(unknownSoup?.code == .unknownSoup)
        #expect(unknownSoup?.soup == "leads")
        #expect(unknownSoup?.query == "SELECT {leads:Name} FROM {leads}")
        #expect(storeError { _ = try store.query(.smart("SELECT {accounts:Name:x} FROM {accounts}")) }?.code == .invalidPath)
        #expect(storeError { _ = try store.query(.smart("SELECT {accounts:Na'me} FROM {accounts}")) }?.code == .invalidPath)
        #expect(storeError { _ = try store.query(.smart("SELECT nosuchfunction({accounts:Name}) FROM {accounts}")) }?.code == .smartSqlError)
        #expect(storeError { _ = try store.query(.smart("   ")) }?.code == .invalidQuery)
        for write in ["DELETE FROM {accounts}", "UPDATE {accounts} SET {accounts:Name} = 'x'", "INSERT INTO {contacts} (soup) VALUES ('{}')",
                      "DROP TABLE {accounts}", "SELECT 1; DELETE FROM {accounts}"] {
            let refused = storeError { _ = try store.query(.smart(write)) }
            #expect([.invalidQuery, .smartSqlError].contains(refused?.code), "\(write): \(String(describing: refused))")
        }
        #expect(try store.count(.all(soupName: "accounts")) == 10, "nothing was written")
        #expect(try store.count(.all(soupName: "contacts")) == 4)
    }

    @Test func indexesAreUsedByTheTranslatedSQL() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try store(directory)
        store.close()
        // The plan of each translation, read on a connection of our own.
        let connection = try SQLiteConnection(path: directory.file("store.sqlite").path, readOnly: true, key: Fixture.sealingKey)
        defer { connection.close() }
        let catalog = try StoreEngine(path: directory.file("store.sqlite").path, published: CatalogBox(), key: Fixture.sealingKey).catalog
        func plan(_ smartSql: String) throws -> String {
            let sql = try SmartSqlTranslator.translate(smartSql, catalog: catalog.soups, file: nil)
            let statement = try connection.prepare("EXPLAIN QUERY PLAN " + sql, cache: false)
            var details: [String] = []
            while try statement.step() { details.append(String(decoding: statement.bytes(3) ?? [], as: UTF8.self)) }
            return details.joined(separator: " | ")
        }
        #expect(try plan("SELECT {accounts:Name} FROM {accounts} WHERE {accounts:Employees} = 10").contains("USING INDEX TABLE_1_1_idx"))
        #expect(try plan("SELECT {accounts:Name} FROM {accounts} WHERE {accounts:Owner.Name} = 'x'").contains("USING INDEX TABLE_1_4_idx"), "json1")
        #expect(try plan("SELECT {contacts:LastName} FROM {accounts}, {contacts} WHERE {accounts:Owner.Name} = 'x' AND {contacts:Title} = {accounts:Industry}").contains("TABLE_1_4_idx"),
                "json1, qualified in a join")
        #expect(try plan("SELECT {contacts:LastName} FROM {contacts} ORDER BY {contacts:AccountName}").contains("TABLE_2_1_idx"))
    }

    @Test func translationsDoNotOutliveARolledBackSoup() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try SmartStore(fileURL: directory.file("store.sqlite"))
        let query = QuerySpec.smart("SELECT {leads:Email} FROM {leads}")
        struct Abort: Error {}
        #expect(throws: Abort.self) {
            try store.inTransaction { tx in
                try tx.registerSoup(SoupSpec(name: "leads", indexes: [IndexSpec(path: "Email", type: .string)]))
                try tx.upsert([["Email": "a@b.c", "Company": "Acme"]], intoSoup: "leads")
                #expect(try tx.query(query) == [["a@b.c"]])
                throw Abort()
            }
        }
        // The same soup again, its columns in another order: the query must not reuse the old SQL.
        try store.registerSoup(SoupSpec(name: "leads", indexes: [IndexSpec(path: "Company", type: .string), IndexSpec(path: "Email", type: .string)]))
        try store.upsert([["Email": "x@y.z", "Company": "Globex"]], intoSoup: "leads")
        #expect(try store.query(query) == [["x@y.z"]])
    }

    @Test func manyDistinctQueriesStayWithinTheStatementCache() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try store(directory)
        for literal in 0..<600 {
            #expect(try store.query(.smart("SELECT count(*) + \(literal) FROM {accounts}")) == [[.int(10 + literal)]])
        }
        try store.upsert([["Name": "After"]], intoSoup: "accounts")
        #expect(try store.count(.all(soupName: "accounts")) == 11)
        #expect(storeError { _ = try store.remove(matching: .all(soupName: "contacts"), fromSoup: "accounts") }?.code == .invalidQuery)
    }

    @Test func removeMatchingASmartQueryRemovesItsFirstPage() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try store(directory)
        let removed = try store.remove(matching: .smart("SELECT {contacts:_soupEntryId} FROM {contacts} WHERE {contacts:AccountName} = 'Acme 1' ORDER BY {contacts:LastName}",
                                                        pageSize: 2), fromSoup: "contacts")
        #expect(removed == 2)
        #expect(try store.query(.all(soupName: "contacts", selectPaths: ["LastName"], orderPath: "LastName")) == [["Cy"], ["Dee"]])
        #expect(try store.remove(matching: .range(soupName: "accounts", path: "Employees", beginKey: 50, endKey: nil, pageSize: 100), fromSoup: "accounts") == 5)
        #expect(try store.count(.match(soupName: "accounts", path: "Description", matchKey: "company OR maker")) == 5, "the full-text rows went too")
    }
}
