import Foundation
import Testing
import AppKernel
import AppKernelAuth
import AppKernelREST
import AppKernelEmbeddedOrg
import AppKernelSDK
import AppKernelTesting

/// A temporary directory, removed when the value goes.
final class TemporaryDirectory {
    let url: URL
    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("offline-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }
    deinit { try? FileManager.default.removeItem(at: url) }
}

@MainActor
struct OfflineDataContractTests {
    // The acceptance test; names adapted: rows of a Smart SQL query are arrays (the id is
    // selected beside the name), `store.update(soup:id:fields:)` is `updateLocally(inSoup:recordId:fields:)`.
    @MainActor @Test func contractSyncedDataSurvivesARelaunchAndLocalChangesSyncUp() async throws {
        let org = EmbeddedOrg.sample()
        let dataHome = try TemporaryDirectory()                     // removed at the end
        var app = try await AccountsFixture.launch(org: org, dataHome: dataHome.url)   // logs in, syncs down
        let names = try app.store.query(.smart("select {Account:Name}, {Account:Id} from {Account} order by {Account:Name}"))
        #expect(names.count == org.records(of: "Account").count)
        org.faults.failAllRequests = true                           // offline
        let firstID = try #require(names.first?.arrayValue?[1].stringValue)
        _ = try app.store.updateLocally(inSoup: "Account", recordId: firstID, fields: ["Name": "Renamed offline"])
        try await app.terminate()
        app = try await AccountsFixture.launch(org: org, dataHome: dataHome.url)       // no login asked
        #expect(app.currentUser != nil)
        #expect(try app.store.locallyModified(soup: "Account").count == 1)
        org.faults.failAllRequests = false
        let result = try await app.syncManager.syncUp(named: "syncUpAccounts")
        #expect(result.failed.isEmpty)
        #expect(org.records(of: "Account").contains { $0["Name"] == "Renamed offline" })
        try await app.terminate()
    }

    @MainActor @Test func aLogoutDeletesTheUsersStoreFiles() async throws {
        let org = EmbeddedOrg.sample()
        let dataHome = try TemporaryDirectory()
        let app = try await AccountsFixture.launch(org: org, dataHome: dataHome.url)
        let user = try #require(app.currentUser)
        let userFolder = dataHome.url.appendingPathComponent("\(user.identity.orgID)/\(user.identity.userID)")
        #expect(FileManager.default.fileExists(atPath: userFolder.appendingPathComponent("stores").path))
        await app.manager.accountManager?.logout(user.identity, reason: .userInitiated)
        #expect(!FileManager.default.fileExists(atPath: userFolder.appendingPathComponent("stores").path))
        await app.manager.reauthentication?.value
        try await app.terminate()
    }
}
