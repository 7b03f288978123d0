import AppKernelCore
@testable import AppKernelStore
import Foundation
import Testing

/// The Smart SQL forms, query-spec accessors, match keys, `reIndexSoup` and `project` of the
/// Mobile SDK, each test written from the SDK's own tests (named in each).
struct SDKSmartSqlTests {
    /// The soups of SFSmartSqlTests.m: `employees` (TABLE_1) and `departments` (TABLE_2), with
    /// the SDK's comments on where each index lives.
    static func employeesStore(_ directory: TemporaryDirectory) throws -> SmartStore {
        let store = try SmartStore(fileURL: directory.file("store.sqlite"))
        try store.registerSoup(SoupSpec(name: "employees", indexes: [
            IndexSpec(path: "firstName", type: .string),      // TABLE_1_0
            IndexSpec(path: "lastName", type: .string),       // TABLE_1_1
            IndexSpec(path: "deptCode", type: .string),       // TABLE_1_2
            IndexSpec(path: "employeeId", type: .string),     // TABLE_1_3
            IndexSpec(path: "managerId", type: .string),      // TABLE_1_4
            IndexSpec(path: "salary", type: .floating),       // TABLE_1_5
            IndexSpec(path: "education", type: .json1),       // json_extract(soup, '$.education')
            IndexSpec(path: "isManager", type: .json1),       // json_extract(soup, '$.isManager')
        ]))
        try store.registerSoup(SoupSpec(name: "departments", indexes: [
            IndexSpec(path: "deptCode", type: .string),       // TABLE_2_0
            IndexSpec(path: "name", type: .string),           // TABLE_2_1
            IndexSpec(path: "budget", type: .integer),        // TABLE_2_2
            IndexSpec(path: "building", type: .json1),        // json_extract(soup, '$.building')
        ]))
        return store
    }

    // SFSmartSqlTests.m: testSimpleConvertSmartSql … testConvertOtherComplexSmartSql.
    @Test func convertSmartSqlGivesTheSDKsConversions() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try Self.employeesStore(directory)
        let cases: [(String, String)] = [
            ("select {employees:firstName}, {employees:lastName} from {employees} order by {employees:lastName}",
             "select TABLE_1_0, TABLE_1_1 from TABLE_1 order by TABLE_1_1"),
            ("select {departments:name} from {departments} order by {departments:deptCode}",
             "select TABLE_2_1 from TABLE_2 order by TABLE_2_0"),
            ("select {departments:name}, {employees:firstName} || ' ' || {employees:lastName} from {employees}, {departments} "
             + "where {departments:deptCode} = {employees:deptCode} order by {departments:name}, {employees:lastName}",
             "select TABLE_2_1, TABLE_1_0 || ' ' || TABLE_1_1 from TABLE_1, TABLE_2 where TABLE_2_0 = TABLE_1_2 order by TABLE_2_1, TABLE_1_1"),
            ("select mgr.{employees:lastName}, e.{employees:lastName} from {employees} as mgr, {employees} as e where mgr.{employees:employeeId} = e.{employees:managerId}",
             "select mgr.TABLE_1_1, e.TABLE_1_1 from TABLE_1 as mgr, TABLE_1 as e where mgr.TABLE_1_3 = e.TABLE_1_4"),
            ("select mgr.{employees:education}, e.{employees:education} from {employees} as mgr, {employees} as e where mgr.{employees:education} = e.{employees:education}",
             "select json_extract(mgr.soup, '$.education'), json_extract(e.soup, '$.education') from TABLE_1 as mgr, TABLE_1 as e "
             + "where json_extract(mgr.soup, '$.education') = json_extract(e.soup, '$.education')"),
            ("select mgr.{employees:education},e.{employees:education} from {employees} as mgr, {employees} as e where not (mgr.{employees:education}=e.{employees:education})",
             "select json_extract(mgr.soup, '$.education'),json_extract(e.soup, '$.education') from TABLE_1 as mgr, TABLE_1 as e "
             + "where not (json_extract(mgr.soup, '$.education')=json_extract(e.soup, '$.education'))"),
            ("select {employees:_soupEntryId}, {employees:_soupCreatedDate}, {employees:_soupLastModifiedDate}, {employees:_soup} from {employees}",
             "select TABLE_1.id, TABLE_1.created, TABLE_1.lastModified, TABLE_1.soup from TABLE_1"),
            ("select {employees:_soupEntryId}, {departments:_soupEntryId} from {employees}, {departments}", "select TABLE_1.id, TABLE_2.id from TABLE_1, TABLE_2"),
            ("select mgr.{employees:_soupEntryId}, e.{employees:_soupEntryId} from {employees} as mgr, {employees} as e",
             "select mgr.id, e.id from TABLE_1 as mgr, TABLE_1 as e"),
            ("select {employees:lastName}, {employees:education} from {employees} where {employees:education} = 'MIT'",
             "select TABLE_1_1, json_extract(soup, '$.education') from TABLE_1 where json_extract(soup, '$.education') = 'MIT'"),
            // The finding: the table-qualified json1 form (testConvertSmartSqlWithJSON1AndTableQualifiedColumn).
            ("select {employees}.{employees:education} from {employees} order by {employees}.{employees:education}",
             "select json_extract(TABLE_1.soup, '$.education') from TABLE_1 order by json_extract(TABLE_1.soup, '$.education')"),
            // testConvertSmartSqlWithJSON1AndTableAliases: the SDK leaves `soup` bare for
            // departments, which SQLite refuses as ambiguous; AppKernel qualifies it (DESIGN).
            ("select e.{employees:education}, {departments:building} from {employees} as e, {departments}",
             "select json_extract(e.soup, '$.education'), json_extract(TABLE_2.soup, '$.building') from TABLE_1 as e, TABLE_2"),
            ("select {employees:education}, {employees:address.zipcode} from {employees} where {employees:address.city} = 'San Francisco'",
             "select json_extract(soup, '$.education'), json_extract(soup, '$.address.zipcode') from TABLE_1 where json_extract(soup, '$.address.city') = 'San Francisco'"),
            ("select {employees:education} from {employees} where {employees:education} like 'Account(where: {Name: {eq: \"Jason\"}})'",
             "select json_extract(soup, '$.education') from TABLE_1 where json_extract(soup, '$.education') like 'Account(where: {Name: {eq: \"Jason\"}})'"),
            ("select {employees:education}, '{a:b}', {employees:firstName} from {employees} where {employees:address} = '{\"city\": \"San Francisco\"}' or {employees:lastName} like 'B%'",
             "select json_extract(soup, '$.education'), '{a:b}', TABLE_1_0 from TABLE_1 where json_extract(soup, '$.address') = '{\"city\": \"San Francisco\"}' or TABLE_1_1 like 'B%'"),
            ("select {employees:education} from {employees} where {employees:education} like ' { { { } } '",
             "select json_extract(soup, '$.education') from TABLE_1 where json_extract(soup, '$.education') like ' { { { } } '"),
        ]
        for (smartSql, sql) in cases {
            #expect(try store.convertSmartSql(smartSql) == sql)
        }
        // testConvertOtherComplexSmartSql: no reference, nothing changed.
        let complex = "SELECT json_set('{}', '$.data.uiapi.query.Account.edges', ( SELECT json_group_array(json_set('{}', '$.node.Id', "
            + "(json_extract('Account.JSON', '$.data.fields.Id.value')) )) FROM (SELECT 'Account'.TABLE_1_1 as 'Account.JSON' FROM TABLE_1 as 'Account' "
            + "WHERE ( json_extract('Account.JSON', '$.data.apiName') = 'Account' ) ) ) ) as json"
        #expect(try store.convertSmartSql(complex) == complex)
        // testConvertSmartSqlWithInsertUpdateDelete: the SDK answers nil; AppKernel throws.
        for write in ["insert into {employees} (soup) values ('{}')", "update {employees} set soup = '{}'", "delete from {employees}"] {
            #expect(storeError { _ = try store.convertSmartSql(write) }?.code == .invalidQuery, "\(write)")
        }
        #expect(try store.convertSmartSql("select * from {employees}") == "select * from TABLE_1")
    }

    // The issue's finding, run: `{soup}.{soup:path}` on an unindexed and a json1 path (SFSmartSqlHelper.m's
    // rewrite of `x.json_extract(soup`).
    @Test func tableQualifiedJSON1AndUnindexedPathsRun() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try Self.employeesStore(directory)
        try store.upsert([["firstName": "Christine", "lastName": "Haas", "education": "MIT", "address": ["city": "Boston"]],
                          ["firstName": "Eva", "lastName": "Pulaski", "education": "Stanford", "address": ["city": "Palo Alto"]]], intoSoup: "employees")
        try store.upsert([["deptCode": "A00", "name": "Sales", "building": "B1"]], intoSoup: "departments")
        #expect(try store.query(.smart("select {employees}.{employees:education}, {employees}.{employees:address.city}, {employees}.{employees:lastName} "
                                       + "from {employees} order by {employees}.{employees:education}")) == [["MIT", "Boston", "Haas"], ["Stanford", "Palo Alto", "Pulaski"]])
        #expect(try store.query(.smart("select {employees}.{employees:_soup} from {employees} where {employees}.{employees:education} = 'MIT'")).first?[0]?["lastName"] == "Haas")
        // In a join, as the SDK's comment asks: every json1 column qualified.
        #expect(try store.query(.smart("select {employees}.{employees:education}, {departments}.{departments:building} from {employees}, {departments} "
                                       + "order by 1")) == [["MIT", "B1"], ["Stanford", "B1"]])
    }

    // SFQuerySpecTests.m: the smartSql, countSmartSql and idsSmartSql of each query type.
    @Test func querySpecSQLAccessorsAreTheSDKs() {
        let all = QuerySpec.all(soupName: "employees", orderPath: "lastName", order: .descending, pageSize: 1)
        #expect(all.smartSql == "SELECT {employees:_soup} FROM {employees} ORDER BY {employees:lastName} DESC ")
        #expect(all.countSmartSql == "SELECT count(*) FROM {employees} ")
        #expect(all.idsSmartSql == "SELECT id FROM {employees} ORDER BY {employees:lastName} DESC ")
        #expect(QuerySpec.all(soupName: "employees", selectPaths: ["firstName", "lastName"], orderPath: "lastName", order: .descending, pageSize: 1).smartSql
                == "SELECT {employees:firstName}, {employees:lastName} FROM {employees} ORDER BY {employees:lastName} DESC ")
        let range = QuerySpec.range(soupName: "employees", path: "lastName", beginKey: "Bond", endKey: "Smith", orderPath: "lastName", pageSize: 1)
        #expect(range.smartSql == "SELECT {employees:_soup} FROM {employees} WHERE {employees:lastName} >= ? AND {employees:lastName} <= ? ORDER BY {employees:lastName} ASC ")
        #expect(range.countSmartSql == "SELECT count(*) FROM {employees} WHERE {employees:lastName} >= ? AND {employees:lastName} <= ? ")
        #expect(range.idsSmartSql == "SELECT id FROM {employees} WHERE {employees:lastName} >= ? AND {employees:lastName} <= ? ORDER BY {employees:lastName} ASC ")
        let exact = QuerySpec.exact(soupName: "employees", path: "lastName", matchKey: "Bond", orderPath: "lastName", pageSize: 1)
        #expect(exact.smartSql == "SELECT {employees:_soup} FROM {employees} WHERE {employees:lastName} = ? ORDER BY {employees:lastName} ASC ")
        #expect(exact.countSmartSql == "SELECT count(*) FROM {employees} WHERE {employees:lastName} = ? ")
        #expect(exact.idsSmartSql == "SELECT id FROM {employees} WHERE {employees:lastName} = ? ORDER BY {employees:lastName} ASC ")
        let match = QuerySpec.match(soupName: "employees", path: "lastName", matchKey: "Bond", orderPath: "firstName", pageSize: 1)
        let matchWhere = "WHERE {employees:_soupEntryId} IN (SELECT rowid FROM {employees}_fts WHERE {employees}_fts MATCH '{employees:lastName}:Bond') "
        #expect(match.smartSql == "SELECT {employees:_soup} FROM {employees} " + matchWhere + "ORDER BY {employees:firstName} ASC ")
        #expect(match.countSmartSql == "SELECT count(*) FROM {employees} " + matchWhere)
        #expect(match.idsSmartSql == "SELECT id FROM {employees} " + matchWhere + "ORDER BY {employees:firstName} ASC ")
        #expect(QuerySpec.match(soupName: "employees", path: "lastName", matchKey: "Bond", selectPaths: ["firstName", "lastName", "title"], orderPath: "firstName",
                                pageSize: 1).smartSql
                == "SELECT {employees:firstName}, {employees:lastName}, {employees:title} FROM {employees} " + matchWhere + "ORDER BY {employees:firstName} ASC ")
        let like = QuerySpec.like(soupName: "employees", path: "lastName", likeKey: "Bon%", orderPath: "lastName", pageSize: 1)
        #expect(like.smartSql == "SELECT {employees:_soup} FROM {employees} WHERE {employees:lastName} LIKE ? ORDER BY {employees:lastName} ASC ")
        #expect(like.countSmartSql == "SELECT count(*) FROM {employees} WHERE {employees:lastName} LIKE ? ")
        #expect(like.idsSmartSql == "SELECT id FROM {employees} WHERE {employees:lastName} LIKE ? ORDER BY {employees:lastName} ASC ")
        let smart = QuerySpec.smart("select {employees:salary} from {employees} where {employees:lastName} = 'Haas'", pageSize: 1)
        #expect(smart.smartSql == "select {employees:salary} from {employees} where {employees:lastName} = 'Haas'")
        #expect(smart.countSmartSql == "SELECT count(*) FROM (select {employees:salary} from {employees} where {employees:lastName} = 'Haas')")
        #expect(smart.idsSmartSql == "SELECT id FROM (select {employees:salary} from {employees} where {employees:lastName} = 'Haas')")
        // testQualifyMatchKey: a term already qualified stays, the others get the path.
        #expect(QuerySpec.match(soupName: "soup", path: "path1", matchKey: "((abc AND {soup:path2}:def) AND NOT ghi) OR jkl").smartSql?
            .contains("MATCH '(({soup:path1}:abc AND {soup:path2}:def) AND NOT {soup:path1}:ghi) OR {soup:path1}:jkl'") == true)
    }

    // SFSmartStore.m runs a spec by converting its smartSql: the accessors' SQL, converted and run,
    // gives the rows the store's own query gives.
    @Test func theSDKsFormOfASpecRunsToTheSameRows() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try FullTextFixture.store(directory)
        let specs: [(QuerySpec, [JSONValue])] = [
            (.exact(soupName: "employees", path: "lastName", matchKey: "Haas", orderPath: "firstName"), ["Haas"]),
            (.range(soupName: "employees", path: "employeeId", beginKey: "00020", endKey: "00050", orderPath: "employeeId"), ["00020", "00050"]),
            (.like(soupName: "employees", path: "firstName", likeKey: "E%", orderPath: "firstName"), ["E%"]),
            (.match(soupName: "employees", path: "firstName", matchKey: "E*", orderPath: "employeeId"), []),
        ]
        for (spec, binds) in specs {
            let expected = try store.query(spec).map { $0["_soupEntryId"] }
            let viaSDKForm = try store.query(.smart(try #require(spec.smartSql), pageSize: 10), whereArgs: binds).map { $0[0]?["_soupEntryId"] }
            #expect(viaSDKForm == expected, "\(spec)")
            #expect(!expected.isEmpty)
            let count = try store.query(.smart(try #require(spec.countSmartSql)), whereArgs: binds)
            #expect(count == [[.int(try store.count(spec))]], "\(spec)")
        }
    }

    // SFSmartStoreFullTextSearchTests.m, trySearchWithFieldColonQueries: match keys with
    // `{soup:path}:term` terms, the path nil (every full-text column).
    @Test func matchKeysWithFieldColonTermsSearchThoseFields() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try FullTextFixture.store(directory)
        let ids = try FullTextFixture.ids(store)
        func search(_ matchKey: String, orderPath: String?) throws -> [Int?] {
            let whole = try store.query(.match(soupName: "employees", path: nil, matchKey: matchKey, orderPath: orderPath, pageSize: 25))
            let selected = try store.query(.match(soupName: "employees", path: nil, matchKey: matchKey, selectPaths: ["_soupEntryId"], orderPath: orderPath, pageSize: 25))
            #expect(selected.compactMap { $0[0]?.intValue } == whole.compactMap { $0["_soupEntryId"]?.intValue }, "selectPaths: \(matchKey)")
            return whole.map { $0["_soupEntryId"]?.intValue }
        }
        #expect(try search("{employees:firstName}:Haas", orderPath: nil) == [])
        #expect(try search("{employees:firstName}:Eva", orderPath: nil) == [ids["Eva"]])
        #expect(try search("{employees:lastName}:Eva", orderPath: nil) == [ids["Eileen"]])
        #expect(try search("{employees:lastName}:Haas", orderPath: "employeeId") == [ids["Christine"], ids["Ali"]])
        #expect(try search("{employees:firstName}:E*", orderPath: "employeeId") == [ids["Eva"], ids["Eileen"]])
        #expect(try search("{employees:lastName}:H*", orderPath: "employeeId") == [ids["Christine"], ids["Ali"]])
        #expect(try search("{employees:lastName}:Thompson OR {employees:firstName}:Ali", orderPath: "employeeId") == [ids["Michael"], ids["Ali"]])
        #expect(try search("{employees:lastName}:Thompson OR {employees:firstName}:Ali", orderPath: "firstName") == [ids["Ali"], ids["Michael"]])
        #expect(try search("{employees:lastName}:Eva OR Haas NOT Ali", orderPath: "employeeId") == [ids["Christine"], ids["Eileen"]])
        #expect(try search("{employees:lastName}:Eva OR Haas NOT Ali", orderPath: "lastName") == [ids["Eileen"], ids["Christine"]])
        // With a path, a bare term takes the path and a qualified one keeps its own (qualifyMatchKey).
        #expect(try store.query(.match(soupName: "employees", path: "lastName", matchKey: "Pulaski OR {employees:firstName}:Ali", orderPath: "employeeId"))
                    .map { $0["_soupEntryId"]?.intValue } == [ids["Ali"], ids["Eva"]])
        // A term on a path without a full-text index, or on another soup, fails naming it.
        let unindexed = storeError { _ = try store.query(.match(soupName: "employees", path: nil, matchKey: "{employees:employeeId}:00010")) }
        #expect(unindexed?.code == .unindexedPath)
        #expect(unindexed?.path == "employeeId")
        #expect(storeError { _ = try store.query(.match(soupName: "employees", path: nil, matchKey: "{nosuch:firstName}:Eva")) }?.code == .unknownSoup)
    }

    // SFSmartStoreTests.m: testProjectTopLevel, testProjectNested, testProjectThroughArrays.
    @Test func projectFollowsTheSDKsJsonUtils() throws {
        let json = try parsed(#"{"a":"va", "b":2, "c":[0,1,2], "d": {"d1":"vd1", "d2":"vd2", "d3":[1,2], "d4":{"e":5}}, "n": null}"#)
        #expect(SmartStore.project(nil, path: "path") == nil)
        #expect(SmartStore.project(json, path: nil) == json)
        #expect(SmartStore.project(json, path: "") == json)
        #expect(SmartStore.project(json, path: "a") == "va")
        #expect(SmartStore.project(json, path: "b") == 2)
        #expect(SmartStore.project(json, path: "c") == [0, 1, 2])
        #expect(SmartStore.project(json, path: "d") == ["d1": "vd1", "d2": "vd2", "d3": [1, 2], "d4": ["e": 5]])
        #expect(SmartStore.project(json, path: "d.d1") == "vd1")
        #expect(SmartStore.project(json, path: "d.d3") == [1, 2])
        #expect(SmartStore.project(json, path: "d.d4") == ["e": 5])
        #expect(SmartStore.project(json, path: "d.d4.e") == 5)
        // null: a JSON null at the end of the path is null; a path through it or past a scalar is nothing.
        #expect(SmartStore.project(json, path: "n") == .null)
        #expect(SmartStore.project(json, path: "n.x") == nil)
        #expect(SmartStore.project(json, path: "a.x") == nil)
        #expect(SmartStore.project(json, path: "missing") == nil)
        let arrays = try parsed(#"{"a":"a1", "b":2, "c":[{"cc":"cc1"}, {"cc":2}, {"cc":[1,2,3]}, {}, {"cc":{"cc5":5}}], "#
                                         + #""d":[{"dd":[{"ddd":"ddd11"},{"ddd":"ddd12"}]}, {"dd":[{"ddd":"ddd21"}]}, {"dd":[{"ddd":"ddd31"},{"ddd3":"ddd32"}]}]}"#)
        #expect(SmartStore.project(arrays, path: "c") == [["cc": "cc1"], ["cc": 2], ["cc": [1, 2, 3]], [:], ["cc": ["cc5": 5]]])
        #expect(SmartStore.project(arrays, path: "c.cc") == ["cc1", 2, [1, 2, 3], ["cc5": 5]])
        #expect(SmartStore.project(arrays, path: "c.cc.cc5") == [5])
        #expect(SmartStore.project(arrays, path: "d.dd") == [[["ddd": "ddd11"], ["ddd": "ddd12"]], [["ddd": "ddd21"]], [["ddd": "ddd31"], ["ddd3": "ddd32"]]])
        #expect(SmartStore.project(arrays, path: "d.dd.ddd") == [["ddd11", "ddd12"], ["ddd21"], ["ddd31"]])
        #expect(SmartStore.project(arrays, path: "c.nothing") == nil, "no element has it")
    }

    // SFSmartStore.h reIndexSoup:withIndexPaths: (and SFSmartStoreAlterTests.m's alter without
    // re-indexing, whose new columns stay empty until re-indexed).
    @Test func reIndexSoupFillsColumnsAndTheFullTextTable() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try SmartStore(fileURL: directory.file("store.sqlite"))
        try store.registerSoup(SoupSpec(name: "employees", indexes: [IndexSpec(path: "lastName", type: .string)]))
        try store.upsert([["lastName": "Haas", "employeeId": "00010", "title": "CEO of things"],
                          ["lastName": "Thompson", "employeeId": "00020", "title": "Manager"]], intoSoup: "employees")
        try store.alterSoup("employees", indexes: [IndexSpec(path: "lastName", type: .string), IndexSpec(path: "employeeId", type: .string),
                                                   IndexSpec(path: "title", type: .fullText)], reIndexData: false)
        let byId = QuerySpec.exact(soupName: "employees", path: "employeeId", matchKey: "00020")
        let byTitle = QuerySpec.match(soupName: "employees", path: "title", matchKey: "things")
        #expect(try store.count(byId) == 0, "not re-indexed: the column is empty")
        #expect(try store.count(byTitle) == 0)
        try store.reIndexSoup("employees", paths: ["employeeId"])
        #expect(try store.query(byId).first?["lastName"] == "Thompson")
        #expect(try store.count(byTitle) == 0, "only the paths given")
        try store.reIndexSoup("employees", paths: ["title"])
        #expect(try store.query(byTitle).first?["lastName"] == "Haas")
        try store.inTransaction { tx in try tx.reIndexSoup("employees", paths: ["lastName", "title"]) }
        #expect(try store.count(byTitle) == 1, "the full-text rows rebuilt, not doubled")
        // The SDK answers NO for an unknown soup and skips an unindexed path in silence.
        #expect(storeError { try store.reIndexSoup("nosuch", paths: ["x"]) }?.code == .unknownSoup)
        let unindexed = storeError { try store.reIndexSoup("employees", paths: ["salary"]) }
        #expect(unindexed?.code == .unindexedPath)
        #expect(unindexed?.path == "salary")
    }

    // The issue's acceptance line, on a store of its own: `{Account}.{Account:Name}` with Name unindexed.
    @Test func theAcceptanceSmartSqlRuns() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try SmartStore(fileURL: directory.file("store.sqlite"))
        try store.registerSoup(SoupSpec(name: "Account", indexes: [IndexSpec(path: "Id", type: .string)]))
        try store.upsert([["Id": "001A", "Name": "Acme"]], intoSoup: "Account")
        #expect(try store.query(.smart("select {Account}.{Account:Name} from {Account}")) == [["Acme"]])
    }
}

/// JSON text as a value (the store's own reader).
private func parsed(_ text: String) throws -> JSONValue {
    try #require(StoreJSON.decode(Array(text.utf8)))
}

/// The employees of SFSmartStoreFullTextSearchTests.m: first and last names full-text indexed,
/// the employee id a string index.
enum FullTextFixture {
    static func store(_ directory: TemporaryDirectory) throws -> SmartStore {
        let store = try SmartStore(fileURL: directory.file("store.sqlite"))
        try store.registerSoup(SoupSpec(name: "employees", indexes: [
            IndexSpec(path: "firstName", type: .fullText), IndexSpec(path: "lastName", type: .fullText), IndexSpec(path: "employeeId", type: .string),
        ]))
        for (first, last, id) in [("Christine", "Haas", "00010"), ("Michael", "Thompson", "00020"), ("Ali", "Haas", "00030"), ("John", "Geyer", "00040"),
                                  ("Irving", "Stern", "00050"), ("Eva", "Pulaski", "00060"), ("Eileen", "Eva", "00070")] {
            try store.upsert([["firstName": .string(first), "lastName": .string(last), "employeeId": .string(id)]], intoSoup: "employees")
        }
        return store
    }

    /// Entry ids by first name.
    static func ids(_ store: SmartStore) throws -> [String: Int] {
        var ids: [String: Int] = [:]
        for entry in try store.query(.all(soupName: "employees", pageSize: 100)) {
            if let first = entry["firstName"]?.stringValue, let id = entry["_soupEntryId"]?.intValue { ids[first] = id }
        }
        return ids
    }
}
