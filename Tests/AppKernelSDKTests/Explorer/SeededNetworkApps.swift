import AppKernel
import AppKernelAuth
import AppKernelREST
import AppKernelSDK
import AppKernelSDKTesting
import AppKernelTesting
import Foundation

/// Keeps each user's accounts list in a cache of its own and shows the current user's. A tap on
/// refresh queries the org through the current user's REST client (inside a background task,
/// cancelled when it expires or the app terminates). The bug: when the page arrives, it writes
/// the records into the cache of whoever is current *then* — after a switch, the other user's
/// list, which shows the first user's accounts. The fix writes them into the cache of the user
/// who asked.
@MainActor
enum CachedAccountsApp {
    final class Delegate: ApplicationDelegate {
        let world: OrgWorld
        let writesToCurrentUser: Bool
        /// Each user's cached list: record ids, by user id.
        var cache: [String: [String]] = [:]
        var refreshes: [Task<Void, Never>] = []

        init(world: OrgWorld, writesToCurrentUser: Bool) {
            self.world = world
            self.writesToCurrentUser = writesToCurrentUser
        }

        func application(_ application: Application, didFinishLaunchingWithOptions options: LaunchOptions) -> Bool {
            world.requestAction = { [weak self] _ in self?.refresh(application) }
            world.screenShows = { [weak self] in self?.shownOwners() ?? [] }
            world.fingerprintParts = [{ [weak self] in "cache \(self?.cache.sorted { $0.key < $1.key }.map { "\($0.key):\($0.value.count)" } ?? [])" }]
            return true
        }

        func applicationWillTerminate(_ application: Application) {
            for refresh in refreshes { refresh.cancel() }
        }

        /// The user's tap on refresh.
        func refresh(_ application: Application) {
            let manager = SDKManager.shared
            guard let requester = manager.accountManager?.currentAccount?.identity, let client = manager.restClientForCurrentUser() else { return }
            let request = client.request(forQuery: "SELECT Id, Name FROM Account", apiVersion: nil)
            let ended = Ended()
            let background = application.beginBackgroundTask(name: "refresh") { [weak self] task in
                for refresh in self?.refreshes ?? [] { refresh.cancel() }
                ended.end(task, of: application)
            }
            let task = Task { @MainActor [weak self] in
                defer { ended.end(background, of: application) }
                guard let response = try? await client.send(request: request), let self else { return }
                let ids = Self.recordIDs(response)
                let owner = self.writesToCurrentUser ? manager.accountManager?.currentAccount?.identity : requester
                if let owner { self.cache[owner.userID] = ids }
            }
            refreshes.append(task)
            world.track(task, named: "refresh")
        }

        /// Whose records the screen shows: the current user's cached list, each record's owner.
        func shownOwners() -> [UserAccountIdentity] {
            guard let current = world.accounts.currentIdentity else { return [] }
            var owners: [UserAccountIdentity] = []
            for id in cache[current.userID] ?? [] {
                if let owner = world.servedRecords[id], !owners.contains(owner) { owners.append(owner) }
            }
            return owners
        }

        static func recordIDs(_ response: RestResponse) -> [String] {
            guard let object = try? JSONSerialization.jsonObject(with: response.data) as? [String: Any],
                  let records = object["records"] as? [[String: Any]] else { return [] }
            return records.compactMap { $0["Id"] as? String }
        }
    }

    /// Ends a background task once, whoever ends it first (the request or its expiry).
    @MainActor final class Ended {
        var isEnded = false
        func end(_ task: BackgroundTaskIdentifier, of application: Application) {
            guard !isEnded else { return }
            isEnded = true
            application.endBackgroundTask(task)
        }
    }

    static func makeWorld(writesToCurrentUser: Bool) throws -> OrgWorld {
        try OrgWorld(expression: "try CachedAccountsApp.makeWorld(writesToCurrentUser: \(writesToCurrentUser))", users: explorerUsers(2)) { world in
            Delegate(world: world as! OrgWorld, writesToCurrentUser: writesToCurrentUser)
        }
    }
}
