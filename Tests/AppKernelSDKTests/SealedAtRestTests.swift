import Foundation
import Testing
import AppKernel
import AppKernelAuth
import AppKernelSDK
import AppKernelStore
import AppKernelTesting

@MainActor
struct SealedAtRestTests {
    // Issue 30's acceptance test; names adapted: `.exact(soup:path:value:)` is
    // `.exact(soupName:path:matchKey:)`, and `SDKManager.shared` is scoped to the test
    // (`.scopedSharedManager`) so that it runs in parallel with the others.
    @MainActor @Test(.scopedSharedManager) func contractNothingReadableAtRestAndLogoutShreds() async throws {
        let home = try TemporaryDirectory(), keys = try TemporaryDirectory()
        let canary = "Canary-\(UUID().uuidString)"
        var app = try await AccountsFixture.launch(dataHome: home.url, keyProvider: .keyFile(in: keys.url))
        _ = try app.store.upsert([["Name": .string(canary)]], intoSoup: "Account")
        try KeyValueEncryptedStore.forCurrentUser(named: "notes").save(canary, forKey: "k")
        try await app.terminate()
        for file in try FileManager.default.allFiles(under: home.url) {   // every byte of every file
            #expect(!(try Data(contentsOf: file)).contains(Data(canary.utf8)))
            #expect(!(try Data(contentsOf: file)).contains(Data(app.lastRefreshToken.utf8)))
        }
        app = try await AccountsFixture.launch(dataHome: home.url, keyProvider: .keyFile(in: keys.url))
        #expect(try app.store.query(.exact(soupName: "Account", path: "Name", matchKey: .string(canary))).count == 1)
        let leftovers = app.storeFiles(of: app.currentUser!)
        try await app.logout()
        #expect(throws: StoreError.self) { try SmartStore(fileURL: leftovers[0], keyProvider: .keyFile(in: keys.url)) }
    }

    // MARK: A key ring is required

    @Test func aDataDirectoryWithoutAKeyRingFailsTheConfigPhaseNamingTheFix() async throws {
        let home = try TemporaryDirectory()
        let manager = SDKManager(bootConfig: BootConfig(remoteAccessConsumerKey: "3MVG9-test", oauthRedirectURI: "app://done", shouldAuthenticate: false))
        manager.dataDirectory = home.url
        let error = await #expect(throws: LaunchError.self) { try await manager.launch() }
        #expect(error?.phase == .config)
        #expect(error?.underlyingError is KeyRingRequiredError)
        #expect("\(error.map { "\($0)" } ?? "")".contains("set SDKManager.keyRing = try KeyRing(dataHome:provider:) — e.g. .keyFile(application:) or .systemdCredential(named:)"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: home.url.path).isEmpty, "nothing was written")
        #expect(throws: KeyRingRequiredError.self) { try manager.userStore() }
    }

    // MARK: Crypto-shredding

    /// A kill after the key was destroyed and before the files went: they are unreadable (typed),
    /// and the next launch removes them, reporting it.
    @Test(.scopedSharedManager) func aShreddedUsersLeftoversAreUnreadableThenRemovedAtTheNextLaunch() async throws {
        let home = try TemporaryDirectory(), keys = try TemporaryDirectory()
        var app = try await AccountsFixture.launch(dataHome: home.url, keyProvider: .keyFile(in: keys.url))
        let user = try #require(app.currentUser)
        _ = try app.store.upsert([["Name": "Ada"]], intoSoup: "Account")
        try KeyValueEncryptedStore.forCurrentUser(named: "notes").save("secret", forKey: "k")
        let files = app.storeFiles(of: user)
        try await app.terminate()
        // The logout's first step, then the kill: the key is gone, the files are still there.
        try app.manager.keyRing?.destroy(owner: KeyRing.owner(of: user.identity))
        let error = #expect(throws: StoreError.self) { try SmartStore(fileURL: files[0], keyProvider: .keyFile(in: keys.url)) }
        #expect(error?.code == .keyDestroyed)
        #expect(error?.file == files[0].path)
        let userFolder = home.url.appendingPathComponent(user.identity.orgID).appendingPathComponent(user.identity.userID)
        let notes = try KeyValueEncryptedStore(parentDirectory: userFolder.appendingPathComponent("key_value_stores"), name: "notes",
                                               owner: KeyRing.owner(of: user.identity), key: try SecretKey.random())
        #expect(try notes.count() == 1, "the entry is there")
        #expect(throws: StoreError.self, "another key opens nothing") { try notes.allKeys() }

        app = try await AccountsFixture.launch(dataHome: home.url, keyProvider: .keyFile(in: keys.url))
        #expect(app.manager.lastResult?.removedLeftovers == [userFolder.standardizedFileURL])
        // The user is still remembered (only the key went): the launch gave them new, empty stores.
        #expect(try app.store.query(.exact(soupName: "Account", path: "Name", matchKey: "Ada")).isEmpty)
        #expect(try KeyValueEncryptedStore.forCurrentUser(named: "notes").count() == 0)
    }

    /// The logout destroys the user's key before anything else: their key file is gone, their
    /// stores and key-value stores too, and a copy of a store taken before opens nothing.
    @Test(.scopedSharedManager) func aLogoutDestroysTheUsersKeyAndFiles() async throws {
        let home = try TemporaryDirectory(), keys = try TemporaryDirectory(), copies = try TemporaryDirectory()
        let app = try await AccountsFixture.launch(dataHome: home.url, keyProvider: .keyFile(in: keys.url))
        let user = try #require(app.currentUser)
        _ = try app.store.upsert([["Name": "Ada"]], intoSoup: "Account")
        try KeyValueEncryptedStore.forCurrentUser(named: "notes").save("secret", forKey: "k")
        let owner = KeyRing.owner(of: user.identity)
        let keyRing = try #require(app.manager.keyRing)
        #expect(try keyRing.owners().contains(owner))
        let copy = copies.url.appendingPathComponent("store.sqlite")
        try FileManager.default.copyItem(at: app.storeFiles(of: user)[0], to: copy)
        try await app.logout()
        #expect(try !keyRing.owners().contains(owner))
        #expect(app.storeFiles(of: user).isEmpty)
        #expect(KeyValueEncryptedStore.allNames(for: .user(user.identity), in: home.url).isEmpty)
        #expect(throws: KeyError.self, "the user's key is gone for good") { try keyRing.dataKey(of: user.identity) }
    }
}
