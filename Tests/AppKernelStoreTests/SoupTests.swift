import AppKernelCore
import AppKernelStore
import Foundation
import Testing

/// Registering, altering, clearing and removing soups, and their metadata in the database.
@Suite(.sealedAndPlain)
struct SoupTests {
    @Test func registeringTheSameSpecAgainIsANoOpAndAContradictionAnError() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try Fixture.store(in: directory)
        try store.registerSoup(Fixture.accounts)
        try store.registerSoup(SoupSpec(name: "accounts", indexes: Fixture.accounts.indexes.reversed()))
        #expect(try store.count(.all(soupName: "accounts")) == 10, "the data is kept")
        var changed = Fixture.accounts
        changed.indexes[0].type = .integer
        let mismatch = storeError { try store.registerSoup(changed) }
        #expect(mismatch?.code == .soupSpecMismatch)
        #expect(mismatch?.soup == "accounts")
        #expect(mismatch?.reason.contains("Name (string)") == true)
        #expect(try store.indexSpecs(forSoup: "accounts") == Fixture.accounts.indexes, "unchanged")
    }

    @Test func invalidSpecsAreRefusedAndNothingIsCreated() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try SmartStore(fileURL: directory.file("store.sqlite"))
        #expect(storeError { try store.registerSoup(SoupSpec(name: "", indexes: [IndexSpec(path: "a", type: .string)])) }?.code == .invalidName)
        #expect(storeError { try store.registerSoup(SoupSpec(name: "x", indexes: [])) }?.code == .invalidSoupSpec)
        #expect(storeError { try store.registerSoup(SoupSpec(name: "x", indexes: [IndexSpec(path: "a", type: .string), IndexSpec(path: "a", type: .integer)])) }?
            .code == .invalidSoupSpec)
        #expect(storeError { try store.registerSoup(SoupSpec(name: "x", indexes: [IndexSpec(path: "a'b", type: .json1)])) }?.code == .invalidPath)
        #expect(storeError { try store.registerSoup(SoupSpec(name: "x", indexes: [IndexSpec(path: "_soupEntryId", type: .integer)])) }?.code == .invalidSoupSpec)
        // registerSoups is all or none.
        let batch = storeError { try store.registerSoups([Fixture.contacts, SoupSpec(name: "bad", indexes: [])]) }
        #expect(batch?.soup == "bad")
        #expect(try store.allSoupNames().isEmpty)
    }

    @Test func soupsPersistInTheSDKsMetadataTablesAcrossReopening() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let file = directory.file("store.sqlite")
        do {
            let store = try Fixture.store(in: directory)
            #expect(store.soupExists("accounts"))
            #expect(!store.soupExists("leads"))
            store.close()
            #expect(store.isClosed)
            #expect(storeError { _ = try store.count(.all(soupName: "accounts")) }?.code == .storeClosed)
        }
        let reopened = try SmartStore(fileURL: file, key: Fixture.sealingKey)
        #expect(try reopened.allSoupNames() == ["accounts", "contacts"])
        #expect(try reopened.indexSpecs(forSoup: "accounts") == Fixture.accounts.indexes)
        #expect(try reopened.count(.all(soupName: "accounts")) == 10)
        // The SDK's tables: soup_attrs names the soups, soup_index_map their columns.
        #expect(try reopened.query(.smart("SELECT id, soupName FROM soup_attrs ORDER BY id")) == [[1, "accounts"], [2, "contacts"]])
        #expect(try reopened.query(.smart("SELECT path, columnName, columnType FROM soup_index_map WHERE soupName = 'accounts' ORDER BY rowid", pageSize: 10)) == [
            ["Name", "TABLE_1_0", "string"], ["Employees", "TABLE_1_1", "integer"], ["Revenue", "TABLE_1_2", "floating"],
            ["Description", "TABLE_1_3", "full_text"], ["Owner.Name", "json_extract(soup, '$.Owner.Name')", "json1"],
        ])
        // New ids continue after the last one.
        let added = try reopened.upsert([["Name": "Zeta"]], intoSoup: "accounts")
        #expect(added.first?["_soupEntryId"] == 11)
    }

    @Test func alterSoupReindexesAndKeepsTheEntries() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try Fixture.store(in: directory)
        let before = try store.query(.all(soupName: "accounts", orderPath: "_soupEntryId", pageSize: 100))
        // Drop Revenue and Owner.Name, keep Name, type-change Employees to string, add Industry (string) and Industry… as full text.
        let indexes = [IndexSpec(path: "Name", type: .string), IndexSpec(path: "Industry", type: .string), IndexSpec(path: "Employees", type: .string),
                       IndexSpec(path: "Description", type: .fullText), IndexSpec(path: "Owner", type: .json1)]
        try store.alterSoup("accounts", indexes: indexes)
        #expect(try store.indexSpecs(forSoup: "accounts") == indexes)
        #expect(try store.query(.all(soupName: "accounts", orderPath: "_soupEntryId", pageSize: 100)) == before, "entries, ids and dates unchanged")
        #expect(try store.count(.exact(soupName: "accounts", path: "Industry", matchKey: "Retail")) == 5, "new index filled")
        #expect(try store.count(.match(soupName: "accounts", path: "Description", matchKey: "cloud")) == 5, "full text rebuilt")
        #expect(try store.query(.smart("SELECT {accounts:Employees} FROM {accounts} WHERE {accounts:Name} = 'Acme 3'")) == [["30"]],
                "string column now")
        #expect(try store.query(.smart("SELECT count(*) FROM {accounts} WHERE {accounts:Industry} = 'Tech'")) == [[5]])
        // New entries get new ids, never reused ones.
        try store.remove([10], fromSoup: "accounts")
        try store.alterSoup("accounts", indexes: Fixture.accounts.indexes)
        #expect(try store.upsert([["Name": "New"]], intoSoup: "accounts").first?["_soupEntryId"] == 11)
        #expect(try store.count(.range(soupName: "accounts", path: "Revenue", beginKey: 5, endKey: nil)) == 4, "re-added index recomputed")
        // The same indexes again: no-op. An unknown soup: error.
        try store.alterSoup("accounts", indexes: Fixture.accounts.indexes)
        #expect(storeError { try store.alterSoup("leads", indexes: indexes) }?.code == .unknownSoup)
    }

    @Test func alterSoupWithoutReindexingLeavesNewColumnsEmpty() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try Fixture.store(in: directory)
        try store.alterSoup("accounts", indexes: Fixture.accounts.indexes + [IndexSpec(path: "Industry", type: .string)], reIndexData: false)
        #expect(try store.query(.smart("SELECT count(*) FROM {accounts} WHERE TABLE_1_5 IS NULL")) == [[10]], "as the SDK: the new column stays empty")
        #expect(try store.count(.exact(soupName: "accounts", path: "Name", matchKey: "Acme 1")) == 1, "kept columns are copied")
        try store.upsert([["Name": "Later", "Industry": "Retail"]], intoSoup: "accounts")
        #expect(try store.count(.exact(soupName: "accounts", path: "Industry", matchKey: "Retail")) == 1, "new entries are indexed")
    }

    @Test func aFailedAlterLeavesTheSoupAsItWas() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try Fixture.store(in: directory)
        #expect(storeError { try store.alterSoup("accounts", indexes: [IndexSpec(path: "Name", type: .string), IndexSpec(path: "bad path", type: .string)]) }?
            .code == .invalidPath)
        // An alter that fails half-way (inside a transaction that then throws) is rolled back whole.
        struct Abort: Error {}
        #expect(throws: Abort.self) {
            try store.inTransaction { tx in
                try tx.alterSoup("accounts", indexes: [IndexSpec(path: "Industry", type: .integer)])
                #expect(try tx.indexSpecs(forSoup: "accounts") == [IndexSpec(path: "Industry", type: .integer)])
                throw Abort()
            }
        }
        #expect(try store.indexSpecs(forSoup: "accounts") == Fixture.accounts.indexes)
        #expect(try store.count(.match(soupName: "accounts", path: "Description", matchKey: "cloud")) == 5)
        #expect(try store.count(.range(soupName: "accounts", path: "Employees", beginKey: 0, endKey: 40)) == 5)
    }

    @Test func clearAndRemoveSoups() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try Fixture.store(in: directory)
        try store.clearSoup("accounts")
        #expect(try store.count(.all(soupName: "accounts")) == 0)
        #expect(try store.count(.match(soupName: "accounts", path: nil, matchKey: "cloud")) == 0)
        #expect(try store.upsert([["Name": "After"]], intoSoup: "accounts").first?["_soupEntryId"] == 11, "ids are not reused")
        try store.removeSoup("accounts")
        #expect(!store.soupExists("accounts"))
        #expect(storeError { _ = try store.indexSpecs(forSoup: "accounts") }?.code == .unknownSoup)
        #expect(storeError { try store.clearSoup("accounts") }?.code == .unknownSoup)
        try store.removeSoup("accounts")  // no-op, as in the SDK
        #expect(try store.query(.smart("SELECT count(*) FROM sqlite_master WHERE name LIKE 'TABLE_1%'")) == [[0]], "tables dropped")
        try store.registerSoup(Fixture.accounts)
        #expect(try store.query(.smart("SELECT id FROM soup_attrs WHERE soupName = 'accounts'")) == [[3]], "a new table, TABLE_3")
        #expect(try store.count(.all(soupName: "accounts")) == 0)
        try store.removeAllSoups()
        #expect(try store.allSoupNames().isEmpty)
    }
}
