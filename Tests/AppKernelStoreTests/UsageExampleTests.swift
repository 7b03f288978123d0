import AppKernelCore
import AppKernelStore
import Foundation
import Testing

/// The README's block, as written; a namespace here so its names stay the README's.
private struct ReadmeStore {
    /// A user's store from its first write to the logout. `keys`: the app's `KeyRing`; `userstore`:
    /// its userstore.json; `page` and `syncState`: what a sync brings.
    func keepAccounts(of identity: UserAccountIdentity, in dataDirectory: URL, keys: KeyRing, userstore: Data,
                      page: [[String: JSONValue]], syncState: [String: JSONValue]) async throws
        -> (store: SmartStore, saved: StoredEntries, acme: [JSONValue], perAccount: [JSONValue], all: [JSONValue]) {
        let store = try SmartStore.shared(withName: "defaultStore", owner: .user(identity), in: dataDirectory, keyRing: keys)
        try store.registerSoups(StoreConfig.parseSoups(userstore))
        let saved = try store.upsert([["Id": "001A", "Name": "Acme", "__local__": false]], intoSoup: "accounts")
        let acme = try store.query(.exact(soupName: "accounts", path: "Name", matchKey: "Acme"))
        let perAccount = try store.query(.smart("""
            SELECT {accounts:Name}, count({contacts:_soupEntryId}) FROM {accounts}
            LEFT JOIN {contacts} ON {contacts:AccountId} = {accounts:Id} GROUP BY {accounts:Name}
            """, pageSize: 50))
        try store.inTransaction { tx in
            try tx.upsert(page, intoSoup: "accounts")
            try tx.upsert([syncState], intoSoup: "syncs_soup", externalIdPath: "name")
        }
        let all = try await store.queryConcurrently(.all(soupName: "accounts", orderPath: "Name", pageSize: 10_000))
        try SmartStore.removeAllStores(for: .user(identity), in: dataDirectory, keyRing: keys)   // at logout
        return (store, saved, acme, perAccount, all)
    }
}

/// The AppKernelStore catalog page's block, as written.
private struct CatalogStore {
    /// Opens the user's store, registers the soups of `userstore` (userstore.json), writes an account and finds it.
    func saveAndFindAcme(for identity: UserAccountIdentity, in dataDirectory: URL, keys: KeyRing, userstore: Data) throws
        -> (saved: StoredEntries, acme: [JSONValue]) {
        let store = try SmartStore.shared(withName: "defaultStore", owner: .user(identity), in: dataDirectory, keyRing: keys)
        try store.registerSoups(StoreConfig.parseSoups(userstore))
        let saved = try store.upsert([["Id": "001A", "Name": "Acme", "__local__": false]], intoSoup: "accounts")
        let acme = try store.query(.exact(soupName: "accounts", path: "Name", matchKey: "Acme"))
        return (saved, acme)
    }
}

/// The usage example given for the README, run as written (with its surroundings made here).
struct UsageExampleTests {
    @Test func theCatalogPagesExampleRuns() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let identity = UserAccountIdentity(userID: "005A", orgID: "00D")
        let userstore = Data(#"{"soups": [{"soupName": "accounts", "indexes": [{"path": "Name", "type": "string"}]}]}"#.utf8)
        let keys = try KeyRing(dataHome: directory.url, provider: .inMemory(try SecretKey.random()))
        let (saved, acme) = try CatalogStore().saveAndFindAcme(for: identity, in: directory.url, keys: keys, userstore: userstore)
        #expect(saved.soupEntryIds == [1])
        #expect(acme.first?["Id"] == "001A")
        try SmartStore.removeAllStores(for: .user(identity), in: directory.url, keyRing: keys)
    }

    @Test func theReadmeExampleRuns() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let dataDirectory = directory.url
        let identity = UserAccountIdentity(userID: "005A", orgID: "00D")
        let userstore = Data(#"{"soups": [{"soupName": "accounts", "indexes": [{"path": "Id", "type": "string"}, {"path": "Name", "type": "string"}, {"path": "__local__", "type": "string"}]}, {"soupName": "contacts", "indexes": [{"path": "AccountId", "type": "string"}]}, {"soupName": "syncs_soup", "indexes": [{"path": "name", "type": "string"}]}]}"#.utf8)
        let page: [[String: JSONValue]] = [["Id": "001B", "Name": "Globex", "__local__": false]]
        let syncState: [String: JSONValue] = ["name": "accountsDown", "maxTimeStamp": 1_700_000_000_000]
        let keys = try KeyRing(dataHome: dataDirectory, provider: .inMemory(try SecretKey.random()))   // an app: .keyFile(application:)

        let (store, saved, acme, perAccount, all) = try await ReadmeStore().keepAccounts(
            of: identity, in: dataDirectory, keys: keys, userstore: userstore, page: page, syncState: syncState)

        #expect(saved.soupEntryIds == [1])
        #expect(acme.first?["Id"] == "001A")
        #expect(perAccount == [["Acme", 0]])
        #expect(all.map { $0["Name"] } == ["Acme", "Globex"])
        #expect(store.isClosed)
        #expect(store.isSealed, "sealed with the user's key from the key ring")
    }
}
