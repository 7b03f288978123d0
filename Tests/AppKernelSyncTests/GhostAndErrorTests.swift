import AppKernelCore
import AppKernelREST
import AppKernelEmbeddedOrg
import AppKernelStore
import AppKernelSync
import AppKernelTesting
import Foundation
import Testing

/// Ghosts, and the typed errors that name the sync, soup or path — each leaving the store as it was.
struct GhostAndErrorTests {
    func fixture() async throws -> SyncFixture {
        try await SyncFixture.make(syncsJSON: SyncDownTests.syncsJSON)
    }

    @Test func ghostsLeaveTheSoupButRecordsWithLocalChangesStay() async throws {
        let world = try await fixture()
        defer { world.remove() }
        try await world.syncs.reSync(named: "syncDownContacts")
        let linus = try #require(world.server("Contact", named: "Linus Torvalds")?["Id"]?.stringValue)
        let grace = try #require(world.server("Contact", named: "Grace Hopper")?["Id"]?.stringValue)
        try world.org.delete(recordID: linus)
        try world.org.delete(recordID: try #require(world.server("Case").first { $0["Subject"] == "Grace's case 1" }?["Id"]?.stringValue))
        try world.org.delete(recordID: grace)
        try world.store.updateLocally(inSoup: "contacts", recordId: grace, fields: ["Title": "edited offline"])
        try await world.syncs.reSync(named: "syncDownContacts")
        #expect(try world.entries("contacts").count == 5, "a resync fetches what changed; it does not see deletions")
        let removed = try await world.syncs.cleanResyncGhosts(forName: "syncDownContacts")
        #expect(removed == 1)
        #expect(try world.entry("contacts", id: linus) == nil)
        #expect(try world.entry("contacts", id: grace)?["Title"] == "edited offline", "local changes stay")
        #expect(try await world.syncs.cleanResyncGhosts(forName: "syncDownContacts") == 0)
    }

    @Test func parentChildrenGhostsLeaveBothSoups() async throws {
        let world = try await fixture()
        defer { world.remove() }
        try await world.syncs.reSync(named: "accountsWithContacts")
        let margaret = try #require(world.server("Contact", named: "Margaret Hamilton")?["Id"]?.stringValue)
        try world.org.delete(recordID: margaret)
        let removed = try await world.syncs.cleanResyncGhosts(forName: "accountsWithContacts")
        #expect(removed == 1)
        #expect(try world.values("contacts", "LastName") == ["Lovelace", "Turing"])
        #expect(try world.values("accounts", "Name") == ["Acme Corporation"])
    }

    @Test func aMissingSoupIsNamedAndNothingRuns() async throws {
        let world = try await fixture()
        defer { world.remove() }
        try world.store.removeSoup("contacts")
        let mark = world.org.requestLog.count
        let error = await syncError { try await world.syncs.reSync(named: "syncDownContacts") }
        #expect(error?.code == .soupNotFound && error?.sync == "syncDownContacts" && error?.soup == "contacts")
        #expect(error?.description.hasPrefix("sync 'syncDownContacts', soup 'contacts': the soup does not exist") == true)
        #expect(world.requests(since: mark).isEmpty)
        #expect(try world.syncs.syncStatus(forName: "syncDownContacts")?.status == .new)
        let parents = await syncError { try await world.syncs.reSync(named: "accountsWithContacts") }
        #expect(parents?.soup == "contacts", "a parent-children sync needs its children's soup too")
        let creating = #expect(throws: SyncError.self) { try world.syncs.createSyncDown(target: .soql("SELECT Id FROM Contact"), soupName: "nowhere") }
        #expect(creating?.code == .soupNotFound && creating?.soup == "nowhere")
    }

    @Test func anUnknownSyncIsNamed() async throws {
        let world = try await fixture()
        defer { world.remove() }
        let error = await syncError { try await world.syncs.reSync(named: "syncDownNothing") }
        #expect(error?.code == .unknownSync && error?.sync == "syncDownNothing")
        let ghosts = await syncError { try await world.syncs.cleanResyncGhosts(forName: "syncDownNothing") }
        #expect(ghosts?.code == .unknownSync)
        let up = await syncError { try await world.syncs.syncUp(named: "syncDownContacts") }
        #expect(up?.code == .wrongSyncType)
    }

    @Test func aServerAnswerWithoutLastModifiedDateFailsTheSyncAndWritesNothing() async throws {
        let world = try await fixture()
        defer { world.remove() }
        let body = #"{"totalSize": 1, "done": true, "records": [{"attributes": {"type": "Contact"}, "Id": "003000000000001AAA", "LastName": "Lovelace"}]}"#
        world.org.injectFault(.respondNext(1, status: 200, contentType: "application/json", body: body))
        let error = await syncError { try await world.syncs.reSync(named: "syncDownContacts") }
        #expect(error?.code == .missingModificationDate)
        #expect(error?.sync == "syncDownContacts" && error?.soup == "contacts" && error?.path == "LastModifiedDate")
        #expect(try world.entries("contacts").isEmpty, "the page was not written")
        let state = try #require(try world.syncs.syncStatus(forName: "syncDownContacts"))
        #expect(state.status == .failed && state.error.contains("has no LastModifiedDate"))
        let retried = try await world.syncs.reSync(named: "syncDownContacts")
        #expect(retried.status == .done && retried.error.isEmpty)
    }

    @Test func aServerFailureMidSyncKeepsThePagesWrittenAndResumesFromThem() async throws {
        let world = try await SyncFixture.make(queryBatchSize: 2, syncsJSON: SyncDownTests.syncsJSON)
        defer { world.remove() }
        let org = world.org
        let injected = Locked(false)
        let error = await syncError {
            try await world.syncs.reSync(named: "syncDownContacts") { state in
                // Once the first page is written, the org fails the next request.
                if state.progress == 40, !injected.withLock({ $0 }) {
                    injected.withLock { $0 = true }
                    org.injectFault(.failNext(1, status: 503, errorCode: "SERVER_UNAVAILABLE", message: "down for maintenance"))
                }
            }
        }
        #expect(error?.code == .serverFailed && error?.restError?.statusCode == 503 && error?.sync == "syncDownContacts")
        #expect(try world.entries("contacts").count == 2, "the first page stays")
        let failed = try #require(try world.syncs.syncStatus(forName: "syncDownContacts"))
        #expect(failed.status == .failed && failed.progress == 40 && failed.error.contains("down for maintenance"))
        let firstPage = try world.entries("contacts").compactMap { $0["LastModifiedDate"]?.stringValue }.max()
        #expect(failed.maxTimeStamp == SalesforceDateTime.millis(from: firstPage ?? ""), "sorted by LastModifiedDate: the mark moved page by page")
        let resumed = try await world.syncs.reSync(named: "syncDownContacts")
        #expect(resumed.totalSize == 3, "the rest")
        #expect(try world.entries("contacts").count == 5)
    }

    @Test func cancellingASyncStopsItAndTheNextRunResumesIt() async throws {
        let clock = TestClock()
        let org = EmbeddedOrg.sample(queryBatchSize: 2, clock: clock, recordClock: EmbeddedOrg.RecordClock(start: SyncFixture.start))
        let world = try await SyncFixture.make(syncsJSON: SyncDownTests.syncsJSON, org: org)
        defer { world.remove() }
        let direct = try SyncManager(store: world.store, restClient: try await org.loggedInClient())
        let run = Task {
            try await direct.reSync(named: "syncDownContacts") { state in
                // After the first page, the next request waits on the test clock.
                if state.status == .running, state.progress == 40 { org.injectFault(.delayNext(.seconds(5))) }
            }
        }
        while clock.pendingCount == 0 { await Task.yield() }
        run.cancel()
        let error = await syncError { _ = try await run.value }
        #expect(error?.code == .stopped && error?.sync == "syncDownContacts")
        let stopped = try #require(try direct.syncStatus(forName: "syncDownContacts"))
        #expect(stopped.status == .stopped && stopped.progress == 40 && stopped.error.isEmpty)
        #expect(try world.entries("contacts").count == 2)
        let resumed = try await direct.reSync(named: "syncDownContacts")
        #expect(resumed.status == .done && resumed.totalSize == 4, "from just before the first page's newest record")
        #expect(try world.entries("contacts").count == 5)
    }

    @Test func aSyncCannotRunTwiceAtOnce() async throws {
        let clock = TestClock()
        let org = EmbeddedOrg.sample(clock: clock, recordClock: EmbeddedOrg.RecordClock(start: SyncFixture.start))
        let world = try await SyncFixture.make(syncsJSON: SyncDownTests.syncsJSON, org: org)
        defer { world.remove() }
        let direct = try SyncManager(store: world.store, restClient: try await org.loggedInClient())
        org.injectFault(.delayNext(.seconds(5)))
        let first = Task { try await direct.reSync(named: "syncDownContacts") }
        while clock.pendingCount == 0 { await Task.yield() }
        let sync = try #require(try direct.syncStatus(forName: "syncDownContacts"))
        #expect(direct.isRunning(syncId: sync.id) && sync.status == .running)
        let second = await syncError { try await direct.reSync(named: "syncDownContacts") }
        #expect(second?.code == .syncAlreadyRunning && second?.sync == "syncDownContacts")
        let ghosts = await syncError { try await direct.cleanResyncGhosts(forName: "syncDownContacts") }
        #expect(ghosts?.code == .syncAlreadyRunning)
        await clock.advance(by: .seconds(5))
        #expect(try await first.value.status == .done)
        #expect(!direct.isRunning(syncId: sync.id))
    }
}

