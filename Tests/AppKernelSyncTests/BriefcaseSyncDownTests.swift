import AppKernelCore
import AppKernelAuth
import AppKernelREST
import AppKernelEmbeddedOrg
import AppKernelStore
import AppKernelSync
import Foundation
import Testing

/// Briefcase sync down (issue 33), after SalesforceMobileSDK-iOS
/// libs/MobileSync/MobileSync/Classes/Target/BriefcaseSyncDownTarget.swift and
/// libs/MobileSync/MobileSyncTests/BriefcaseSyncDownTests.swift, against the embedded org's
/// `connect/briefcase/priming-records` (Connect REST API Developer Guide, "Briefcase Priming
/// Records Resource" and "Priming Record Collection").
struct BriefcaseSyncDownTests {
    static let infos = [BriefcaseObjectInfo(sobjectType: "Account", fieldlist: ["Id", "Name"], soupName: "accounts"),
                        BriefcaseObjectInfo(sobjectType: "Contact", fieldlist: ["Id", "LastName", "AccountId"], soupName: "contacts")]

    @Test func theOrgServesPrimingRecordsAsDocumentedPagedByRelayToken() async throws {
        let world = try await SyncFixture.make(queryBatchSize: 3)
        defer { world.remove() }
        var token: String?
        var ids: [String: Set<String>] = [:]
        var pages = 0
        repeat {
            let query: [RestRequest.QueryParameter] = token.map { [.init("relayToken", $0)] } ?? []
            let answer = try await world.client.send(request: world.client.request(method: .get, path: "/services/data/v62.0/connect/briefcase/priming-records",
                                                                                 queryParameters: query)).asJSON()
            pages += 1
            for (type, byRecordType) in answer["primingRecords"]?.objectValue ?? [:] {
                for (recordType, records) in byRecordType.objectValue ?? [:] {
                    #expect(recordType.hasPrefix("012"), "grouped by record type")
                    for record in records.arrayValue ?? [] {
                        #expect(record["systemModstamp"]?.stringValue != nil)
                        ids[type, default: []].insert(record["id"]?.stringValue ?? "")
                    }
                }
            }
            #expect(answer["ruleErrors"] == [])
            #expect((answer["stats"]?["recordCountServed"]?.intValue ?? 0) <= 3)
            token = answer["relayToken"]?.stringValue
        } while token != nil
        #expect(ids["Account"] == Set(world.server("Account").compactMap { $0["Id"]?.stringValue }))
        #expect(ids["Contact"] == Set(world.server("Contact").compactMap { $0["Id"]?.stringValue }))
        #expect(pages > 1)
        // Either changedAfterTimestamp or relayToken, not both; a token the org did not give is refused.
        let both = world.client.request(method: .get, path: "/services/data/v62.0/connect/briefcase/priming-records",
                                        queryParameters: [.init("relayToken", "x"), .init("changedAfterTimestamp", "2026-01-01T00:00:00.000Z")])
        await #expect(throws: RestClientError.self) { _ = try await world.client.send(request: both) }
    }

    @Test func aBriefcaseSyncDownFetchesEveryPrimedRecordByIdIntoItsTypesSoup() async throws {
        let world = try await SyncFixture.make(queryBatchSize: 3)
        defer { world.remove() }
        let mark = world.org.requestLog.count
        let state = try await world.syncs.syncDown(target: .briefcase(Self.infos, countIdsPerRetrieve: 2), soupName: "accounts", syncName: "primed")
        #expect(state.status == .done)
        #expect(try world.values("accounts", "Id") == world.server("Account").compactMap { $0["Id"]?.stringValue }.sorted())
        #expect(try world.values("contacts", "Id") == world.server("Contact").compactMap { $0["Id"]?.stringValue }.sorted())
        let requests = world.requests(since: mark)
        #expect(requests.filter { $0.hasSuffix("/connect/briefcase/priming-records") }.count > 1, "paged by relayToken")
        #expect(requests.contains("POST /services/data/v62.0/composite/sobjects/Contact"), "fetched by id")
        #expect(state.maxTimeStamp > 0)
        // A resync asks for what changed since (changedAfterTimestamp): one account renamed.
        let acme = try #require(world.server("Account").first?["Id"]?.stringValue)
        world.time.advance(by: .seconds(3600))
        try world.org.update(recordID: acme, fields: ["Name": "Renamed"])
        let again = try await world.syncs.reSync(named: "primed")
        #expect(again.totalSize == 1)
        #expect(try world.entry("accounts", id: acme)?["Name"] == "Renamed")
    }

    @Test func briefcaseGhostsLeaveEachInfosSoup() async throws {
        let world = try await SyncFixture.make()
        defer { world.remove() }
        try await world.syncs.syncDown(target: .briefcase(Self.infos), soupName: "accounts", syncName: "primed")
        let contact = try #require(world.server("Contact").first(where: { !world.org.hasChildren(recordID: $0["Id"]?.stringValue ?? "") })?["Id"]?.stringValue)
        try world.org.delete(recordID: contact)
        let before = try world.entries("contacts").count
        let removed = try await world.syncs.cleanResyncGhosts(forName: "primed")
        #expect(removed == 1)
        #expect(try world.entries("contacts").count == before - 1 && world.entry("contacts", id: contact) == nil)
    }
}
