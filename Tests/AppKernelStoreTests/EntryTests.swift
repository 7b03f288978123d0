import AppKernelCore
import AppKernelStore
import Foundation
import Testing

/// Upsert, create, retrieve and remove; external ids; atomicity of writes and transactions.
@Suite(.sealedAndPlain)
struct EntryTests {
    @Test func upsertInsertsThenUpdatesBySoupEntryId() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try Fixture.store(in: directory, accounts: false)
        let saved = try store.upsert([["Name": "Acme", "Employees": 5], ["Name": "Globex"]], intoSoup: "accounts")
        #expect(saved.map { $0["_soupEntryId"] } == [1, 2])
        let stamp = try #require(saved[0]["_soupLastModifiedDate"]?.intValue)
        #expect(saved.soupEntryIds == [1, 2])
        #expect(saved.lastModifiedDate == stamp)
        #expect(Array(saved) == [["Name": "Acme", "Employees": 5, "_soupEntryId": 1, "_soupLastModifiedDate": .int(stamp)],
                                 ["Name": "Globex", "_soupEntryId": 2, "_soupLastModifiedDate": .int(stamp)]])
        #expect(try store.retrieve([1, 2], fromSoup: "accounts") == Array(saved), "what upsert returns is what is stored")
        var acme = saved[0]
        acme["Employees"] = 6
        let updated = try store.upsert([acme], intoSoup: "accounts")
        #expect(updated[0]["_soupEntryId"] == 1)
        #expect(try #require(updated[0]["_soupLastModifiedDate"]?.intValue) >= stamp)
        #expect(try store.retrieve([1, 2, 99], fromSoup: "accounts").map { $0["Employees"] } == [6, nil], "ids that exist, by id")
        #expect(try store.count(.all(soupName: "accounts")) == 2)
        // create always inserts.
        let copy = try store.create([acme], inSoup: "accounts")
        #expect(copy[0]["_soupEntryId"] == 3)
        // JSON's types survive the round trip, nested and escaped.
        let odd: [String: JSONValue] = ["Name": "quote \" back\\slash\nnew line é 😀 \u{01}", "big": .int(Int.max), "small": .int(Int.min), "neg": -0.25,
                                        "exp": 1e300, "flag": false, "none": nil, "list": [1, "two", [3.5], ["k": nil]], "empty": [:], "emptyList": []]
        let stored = try store.upsert([odd], intoSoup: "accounts")[0]
        #expect(try store.retrieve([stored["_soupEntryId"]!.intValue!], fromSoup: "accounts") == [stored])
        #expect(stored.filter { !$0.key.hasPrefix("_soup") } == odd)
    }

    @Test func upsertByExternalIdMatchesTheIndexedPath() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try Fixture.store(in: directory, accounts: false)
        try store.upsert([["Name": "Acme", "Employees": 1], ["Name": "Globex", "Employees": 2]], intoSoup: "accounts", externalIdPath: "Name")
        let again = try store.upsert([["Name": "Acme", "Employees": 10], ["Name": "Initech", "Employees": 3]], intoSoup: "accounts", externalIdPath: "Name")
        #expect(again.map { $0["_soupEntryId"] } == [1, 3])
        #expect(try store.query(.all(soupName: "accounts", selectPaths: ["Name", "Employees"], orderPath: "Name")) ==
                [["Acme", 10], ["Globex", 2], ["Initech", 3]])
        // By a json1 index too; `_soupEntryId` as the path is the default behaviour.
        try store.upsert([["Name": "Umbrella", "Owner": ["Name": "Wesker"]]], intoSoup: "accounts", externalIdPath: "Owner.Name")
        try store.upsert([["Name": "Umbrella Corp", "Owner": ["Name": "Wesker"]]], intoSoup: "accounts", externalIdPath: "Owner.Name")
        #expect(try store.count(.like(soupName: "accounts", path: "Name", likeKey: "Umbrella%")) == 1)
        try store.upsert([["_soupEntryId": 1, "Name": "Acme Inc"]], intoSoup: "accounts", externalIdPath: "_soupEntryId")
        #expect(try store.retrieve([1], fromSoup: "accounts").first?["Name"] == "Acme Inc")
    }

    @Test func upsertErrorsLeaveTheSoupAsItWas() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try Fixture.store(in: directory)
        let snapshot = try store.query(.all(soupName: "accounts", orderPath: "_soupEntryId", pageSize: 100))
        func unchanged(_ sourceLocation: SourceLocation = #_sourceLocation) throws {
            #expect(try store.query(.all(soupName: "accounts", orderPath: "_soupEntryId", pageSize: 100)) == snapshot, sourceLocation: sourceLocation)
            #expect(try store.count(.match(soupName: "accounts", path: nil, matchKey: "new")) == 0, sourceLocation: sourceLocation)
        }
        // Each batch starts with good entries, so a half-done write would show.
        let good: [[String: JSONValue]] = [["Name": "new 1", "Description": "new"], ["_soupEntryId": 1, "Name": "changed", "Description": "new"]]
        let unknownID = storeError { try store.upsert(good + [["_soupEntryId": 999, "Name": "ghost"]], intoSoup: "accounts") }
        #expect(unknownID?.code == .unknownEntry)
        #expect(unknownID?.soup == "accounts")
        try unchanged()
        #expect(storeError { try store.upsert(good + [["_soupEntryId": "7"]], intoSoup: "accounts") }?.code == .invalidEntry)
        #expect(storeError { try store.upsert(good + [["Name": .double(.nan)]], intoSoup: "accounts") }?.code == .invalidEntry)
        let notObject = storeError { try store.upsert([["Name": "ok"], "not an object"] as [JSONValue], intoSoup: "accounts") }
        #expect(notObject?.code == .invalidEntry)
        #expect(notObject?.reason.contains("entry 1") == true)
        #expect(storeError { try store.upsert(good, intoSoup: "leads") }?.code == .unknownSoup)
        try unchanged()
        // External ids: an un-indexed path, a missing value, a value several entries share.
        #expect(storeError { try store.upsert(good, intoSoup: "accounts", externalIdPath: "Industry") }?.code == .unindexedPath)
        #expect(storeError { try store.upsert([["Name": "x", "Employees": 1], ["Employees": 2]], intoSoup: "accounts", externalIdPath: "Name") }?.code == .missingExternalId)
        try store.upsert([["LastName": "Twin", "AccountName": "A"], ["LastName": "Twin", "AccountName": "B"]], intoSoup: "contacts")
        let duplicate = storeError { try store.upsert([["LastName": "Twin"]], intoSoup: "contacts", externalIdPath: "LastName") }
        #expect(duplicate?.code == .duplicateExternalId)
        #expect(duplicate?.path == "LastName")
        try unchanged()
    }

    @Test func removeByIdsAndByQuery() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try Fixture.store(in: directory)
        #expect(try store.remove([1, 2, 42], fromSoup: "accounts") == 2)
        #expect(try store.retrieve([1, 2, 3], fromSoup: "accounts").map { $0["Name"] } == ["Acme 2"])
        #expect(try store.remove(matching: .exact(soupName: "accounts", path: "Industry", matchKey: "Retail", pageSize: 3), fromSoup: "accounts") == 3,
                "up to the page size, as the SDK")
        #expect(try store.count(.all(soupName: "accounts")) == 5)
        #expect(storeError { _ = try store.remove([1], fromSoup: "leads") }?.code == .unknownSoup)
    }

    @Test func aTransactionCommitsTogetherOrNotAtAll() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try Fixture.store(in: directory, accounts: false)
        let count = try store.inTransaction { tx in
            try tx.upsert([["Name": "Acme"]], intoSoup: "accounts")
            try tx.upsert([["LastName": "Ada", "AccountName": "Acme"]], intoSoup: "contacts")
            // Reads inside see the transaction's writes.
            return try tx.count(.all(soupName: "accounts")) + tx.count(.all(soupName: "contacts"))
        }
        #expect(count == 2)
        struct Abort: Error {}
        #expect(throws: Abort.self) {
            try store.inTransaction { tx in
                try tx.upsert([["Name": "Globex"]], intoSoup: "accounts")
                try tx.registerSoup(SoupSpec(name: "leads", indexes: [IndexSpec(path: "Email", type: .string)]))
                try tx.clearSoup("contacts")
                throw Abort()
            }
        }
        #expect(try store.count(.all(soupName: "accounts")) == 1)
        #expect(try store.count(.all(soupName: "contacts")) == 1)
        #expect(!store.soupExists("leads"))
        // A failing operation inside is undone alone; the closure may go on.
        try store.inTransaction { tx in
            try tx.upsert([["Name": "Initech"]], intoSoup: "accounts")
            let failed = storeError { try tx.upsert([["Name": "half"], ["_soupEntryId": 77]], intoSoup: "accounts") }
            #expect(failed?.code == .unknownEntry)
            try tx.upsert([["Name": "Hooli"]], intoSoup: "accounts")
        }
        #expect(try store.query(.all(soupName: "accounts", selectPaths: ["Name"], orderPath: "_soupEntryId")) == [["Acme"], ["Initech"], ["Hooli"]])
        // The store's own methods inside the closure are refused, not deadlocked.
        try store.inTransaction { _ in
            #expect(storeError { try store.upsert([["Name": "nested"]], intoSoup: "accounts") }?.code == .nestedTransaction)
            #expect(storeError { _ = try store.inTransaction { _ in 1 } }?.code == .nestedTransaction)
        }
        #expect(try store.count(.all(soupName: "accounts")) == 3)
    }
}
