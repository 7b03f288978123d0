import AppKernelCore
import AppKernelStore
import Foundation
import Testing

/// The non-smart query kinds over every index type, select paths, order, paging and count.
@Suite(.sealedAndPlain)
struct QueryTests {
    func names(_ rows: [JSONValue]) -> [String] { rows.compactMap { $0["Name"]?.stringValue } }

    @Test func allReturnsEveryEntryAsAnObjectWithItsIdAndDate() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try Fixture.store(in: directory)
        let all = try store.query(.all(soupName: "accounts", orderPath: "Name", pageSize: 100))
        #expect(names(all) == (0..<10).map { "Acme \($0)" })
        let first = try #require(all.first?.objectValue)
        #expect(first["_soupEntryId"] == 1)
        #expect(first["_soupLastModifiedDate"]?.intValue ?? 0 > 1_600_000_000_000)
        #expect(first["Owner"] == ["Name": "Owner 0"])
        #expect(first["Revenue"] == 0.5)
        #expect(try store.count(.all(soupName: "accounts")) == 10)
    }

    @Test func exactMatchesOnEachIndexTypeAndUnindexedPaths() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try Fixture.store(in: directory)
        #expect(names(try store.query(.exact(soupName: "accounts", path: "Name", matchKey: "Acme 3"))) == ["Acme 3"])         // string
        #expect(names(try store.query(.exact(soupName: "accounts", path: "Employees", matchKey: 40))) == ["Acme 4"])          // integer
        #expect(names(try store.query(.exact(soupName: "accounts", path: "Employees", matchKey: "40"))) == ["Acme 4"])        // affinity
        #expect(names(try store.query(.exact(soupName: "accounts", path: "Revenue", matchKey: 2.5))) == ["Acme 2"])           // floating
        #expect(names(try store.query(.exact(soupName: "accounts", path: "Description", matchKey: "odd hardware maker 5"))) == ["Acme 5"])  // full_text column
        #expect(names(try store.query(.exact(soupName: "accounts", path: "Owner.Name", matchKey: "Owner 1", orderPath: "Name"))) == ["Acme 1", "Acme 4", "Acme 7"])  // json1
        #expect(names(try store.query(.exact(soupName: "accounts", path: "Industry", matchKey: "Retail", orderPath: "Name", pageSize: 20))) ==
                ["Acme 5", "Acme 6", "Acme 7", "Acme 8", "Acme 9"])                                                            // not indexed
        #expect(try store.query(.exact(soupName: "accounts", path: "Name", matchKey: "nobody")).isEmpty)
        #expect(try store.count(.exact(soupName: "accounts", path: "Industry", matchKey: "Tech")) == 5)
    }

    @Test func rangeBoundsAreInclusiveAndOptional() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try Fixture.store(in: directory)
        #expect(names(try store.query(.range(soupName: "accounts", path: "Employees", beginKey: 20, endKey: 40, orderPath: "Employees"))) ==
                ["Acme 2", "Acme 3", "Acme 4"])
        #expect(names(try store.query(.range(soupName: "accounts", path: "Revenue", beginKey: 7.5, endKey: nil, orderPath: "Revenue"))) ==
                ["Acme 7", "Acme 8", "Acme 9"])
        #expect(names(try store.query(.range(soupName: "accounts", path: "Name", beginKey: nil, endKey: "Acme 1", orderPath: "Name"))) ==
                ["Acme 0", "Acme 1"])
        #expect(try store.count(.range(soupName: "accounts", path: "Owner.Name", beginKey: "Owner 1", endKey: "Owner 2")) == 6)
        #expect(try store.count(.range(soupName: "accounts", path: "Employees", beginKey: nil, endKey: nil)) == 10)
    }

    @Test func likeIsCaseInsensitiveWithWildcards() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try Fixture.store(in: directory)
        #expect(try store.count(.like(soupName: "accounts", path: "Name", likeKey: "acme%")) == 10)
        #expect(names(try store.query(.like(soupName: "accounts", path: "Description", likeKey: "%maker 7"))) == ["Acme 7"])
        #expect(names(try store.query(.like(soupName: "accounts", path: "Owner.Name", likeKey: "%2", orderPath: "Name"))) == ["Acme 2", "Acme 5", "Acme 8"])
    }

    @Test func matchSearchesFullTextWithFTS5Syntax() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try Fixture.store(in: directory)
        #expect(try store.count(.match(soupName: "accounts", path: "Description", matchKey: "cloud")) == 5)
        #expect(names(try store.query(.match(soupName: "accounts", path: "Description", matchKey: "hardware AND 3"))) == ["Acme 3"])
        #expect(try store.count(.match(soupName: "accounts", path: "Description", matchKey: "clo*")) == 5)
        #expect(try store.count(.match(soupName: "accounts", path: "Description", matchKey: "(cloud OR hardware) NOT 4")) == 9)
        #expect(try store.count(.match(soupName: "accounts", path: nil, matchKey: "maker")) == 5)
        // An update re-indexes the text; a removal drops it.
        let acme3 = try #require(try store.query(.exact(soupName: "accounts", path: "Name", matchKey: "Acme 3")).first?.objectValue)
        var changed = acme3
        changed["Description"] = "now a cloud company"
        try store.upsert([changed], intoSoup: "accounts")
        #expect(try store.count(.match(soupName: "accounts", path: "Description", matchKey: "cloud")) == 6)
        try store.remove([acme3["_soupEntryId"]!.intValue!], fromSoup: "accounts")
        #expect(try store.count(.match(soupName: "accounts", path: "Description", matchKey: "cloud")) == 5)
    }

    @Test func matchNeedsAFullTextIndex() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try Fixture.store(in: directory)
        let onString = storeError { _ = try store.query(.match(soupName: "accounts", path: "Name", matchKey: "Acme")) }
        #expect(onString?.code == .unindexedPath)
        #expect(onString?.path == "Name")
        #expect(onString?.soup == "accounts")
        #expect(storeError { _ = try store.query(.match(soupName: "contacts", path: nil, matchKey: "x")) }?.code == .unindexedPath)
    }

    @Test func selectPathsReturnArraysOfValues() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try Fixture.store(in: directory)
        let rows = try store.query(.range(soupName: "accounts", path: "Employees", beginKey: 10, endKey: 20,
                                          selectPaths: ["Name", "Employees", "Revenue", "Owner.Name", "Industry", "_soupEntryId"], orderPath: "Employees"))
        #expect(rows == [["Acme 1", 10, 1.5, "Owner 1", "Tech", 2], ["Acme 2", 20, 2.5, "Owner 2", "Tech", 3]])
        // `_soup` in selectPaths is the whole entry.
        let whole = try store.query(.exact(soupName: "accounts", path: "Name", matchKey: "Acme 0", selectPaths: ["_soup"]))
        #expect(whole.first?[0]?["Name"] == "Acme 0")
    }

    @Test func orderAndPagingFollowTheSpec() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try Fixture.store(in: directory)
        let descending = QuerySpec.all(soupName: "accounts", orderPath: "Employees", order: .descending, pageSize: 4)
        #expect(names(try store.query(descending, pageIndex: 0)) == ["Acme 9", "Acme 8", "Acme 7", "Acme 6"])
        #expect(names(try store.query(descending, pageIndex: 1)) == ["Acme 5", "Acme 4", "Acme 3", "Acme 2"])
        #expect(names(try store.query(descending, pageIndex: 2)) == ["Acme 1", "Acme 0"])
        #expect(try store.query(descending, pageIndex: 3).isEmpty)
        #expect(try store.count(descending) == 10, "count ignores paging")
        #expect(names(try store.query(.all(soupName: "accounts", orderPath: "Owner.Name", order: .descending, pageSize: 3))).allSatisfy {
            ["Acme 2", "Acme 5", "Acme 8"].contains($0)
        })
        #expect(names(try store.query(.all(soupName: "accounts", orderPath: "_soupEntryId", order: .descending, pageSize: 1))) == ["Acme 9"])
        #expect(storeError { _ = try store.query(descending, pageIndex: -1) }?.code == .invalidQuery)
        #expect(storeError { _ = try store.query(.all(soupName: "accounts", pageSize: 0)) }?.code == .invalidQuery)
    }

    @Test func unknownSoupsAndMalformedPathsAreTypedErrors() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try Fixture.store(in: directory)
        let unknown = storeError { _ = try store.query(.all(soupName: "leads")) }
        #expect(unknown?.code == .unknownSoup)
        #expect(unknown?.soup == "leads")
        #expect(unknown?.file == directory.file("store.sqlite").path)
        for path in ["Name'; DROP TABLE soup_attrs; --", "a..b", "", "{x}", "a:b"] {
            let error = storeError { _ = try store.query(.exact(soupName: "accounts", path: path, matchKey: 1)) }
            #expect(error?.code == .invalidPath, "\(path)")
            #expect(error?.path == path)
        }
        #expect(storeError { _ = try store.query(.all(soupName: "accounts", orderPath: "x y")) }?.code == .invalidPath)
        #expect(storeError { _ = try store.query(.all(soupName: "accounts"), whereArgs: [1]) }?.code == .invalidQuery)
        #expect(try store.count(.all(soupName: "accounts")) == 10, "nothing was harmed")
    }

    @Test func syncFlagsAreQueryableWhetherIndexedOrNot() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try SmartStore(fileURL: directory.file("store.sqlite"))
        // `__local__` indexed as a string (MobileSync's usual spec), `__locally_deleted__` as json1,
        // `__locally_updated__` not at all.
        try store.registerSoup(SoupSpec(name: "accounts", indexes: [IndexSpec(path: "Id", type: .string), IndexSpec(path: "__local__", type: .string),
                                                                   IndexSpec(path: "__locally_deleted__", type: .json1)]))
        try store.upsert([
            ["Id": "001A", "__local__": false, "__locally_created__": false, "__locally_updated__": false, "__locally_deleted__": false],
            ["Id": "001B", "__local__": true, "__locally_created__": false, "__locally_updated__": true, "__locally_deleted__": false],
            ["Id": "LOCAL1", "__local__": true, "__locally_created__": true, "__locally_updated__": false, "__locally_deleted__": false],
            ["Id": "001C", "__local__": true, "__locally_created__": false, "__locally_updated__": false, "__locally_deleted__": true],
        ], intoSoup: "accounts")
        let ids = { (spec: QuerySpec) in try store.query(spec).compactMap { $0["Id"]?.stringValue }.sorted() }
        #expect(try ids(.exact(soupName: "accounts", path: "__local__", matchKey: true, pageSize: 10)) == ["001B", "001C", "LOCAL1"])
        #expect(try ids(.exact(soupName: "accounts", path: "__local__", matchKey: false)) == ["001A"])
        #expect(try ids(.exact(soupName: "accounts", path: "__locally_deleted__", matchKey: true)) == ["001C"])
        #expect(try ids(.exact(soupName: "accounts", path: "__locally_updated__", matchKey: true)) == ["001B"])
        #expect(try ids(.exact(soupName: "accounts", path: "__locally_created__", matchKey: true)) == ["LOCAL1"])
        // Smart SQL as MobileSync writes it (iOS compares with '1', the SDK's string index storage).
        let dirty = try store.query(.smart("SELECT {accounts:Id} FROM {accounts} WHERE {accounts:__local__} = '1' ORDER BY {accounts:Id}"))
        #expect(dirty == [["001B"], ["001C"], ["LOCAL1"]])
        #expect(try store.query(.smart("SELECT count(*) FROM {accounts} WHERE {accounts:__locally_deleted__} = 1")) == [[1]])
        // The entries keep their Booleans.
        #expect(try store.query(.exact(soupName: "accounts", path: "Id", matchKey: "001A")).first?["__local__"] == false)
    }
}
