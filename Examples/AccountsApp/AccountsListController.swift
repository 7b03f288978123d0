import AppKernel
import AppKernelAuth
import AppKernelREST
import AppKernelSDK
import Foundation

/// The root controller — the template's `RootViewController`, rendered as text: the current
/// user's accounts (synced down into their store by `usersyncs.json`'s `syncDownAccounts`) and
/// their contacts (a `RecordList` over REST, deleted optimistically with rollback).
@MainActor
final class AccountsListController: RootController {
    let user: UserAccount?
    let manager: AccountsSDKManager
    private(set) var contacts: RecordList?
    private(set) var syncedAccounts = 0
    /// The sync and load started when the controller appeared.
    private(set) var loading: Task<Void, Never>?

    init(user: UserAccount?, manager: AccountsSDKManager) {
        self.user = user
        self.manager = manager
    }

    var username: String { user?.userIdentity?.username ?? user?.identity.description ?? "nobody" }

    func viewDidAppear() {
        Console.say("root controller appeared for \(username)")
        loading = Task { await self.refresh() }
    }

    func viewDidDisappear() {
        loading?.cancel()
    }

    /// Syncs the accounts down and loads the contacts, then shows the list.
    func refresh() async {
        guard user != nil, let client = manager.restClient else {
            Console.say("nobody is logged in")
            return
        }
        do {
            syncedAccounts = try await syncDownAccounts(client)
            Console.say("synced down \(syncedAccounts) account(s) into the store of \(username)")
            let list = RecordList(client: client, query: "SELECT Id, Name FROM Contact ORDER BY Name")
            list.onChange = { change in
                switch change {
                case .removed(let index, _): Console.say("  row \(index + 1) removed (optimistic delete)")
                case .inserted(let index, _): Console.say("  row \(index + 1) put back")
                case .reloaded: break
                }
            }
            try await list.load()
            contacts = list
            Console.say(render())
        } catch {
            Console.say("could not load the list: \(error)")
        }
    }

    /// Runs `usersyncs.json`'s `syncDownAccounts` SOQL into the registry's soup, page by page.
    /// (MobileSync's `SyncManager` now syncs a SmartStore; the app moves to it with its store.)
    private func syncDownAccounts(_ client: RestClient) async throws -> Int {
        let owner = manager.currentStoreOwner
        guard let spec = manager.stores.syncs(for: owner).first(where: { $0.name == "syncDownAccounts" }), let soql = spec.query else { return 0 }
        var request = client.request(forQuery: soql, apiVersion: nil)
        var count = 0
        while true {
            let page = try await client.send(request: request).asJSON()
            for case .object(var fields) in page["records"]?.arrayValue ?? [] {
                fields["attributes"] = nil
                try manager.stores.upsert(fields, intoSoup: spec.soupName, for: owner)
                count += 1
            }
            guard let next = page["nextRecordsUrl"]?.stringValue else { return count }
            request = client.request(method: .get, path: next)
        }
    }

    /// The screen, as text.
    func render() -> String {
        var lines = ["┌ Accounts of \(username)"]
        let accounts = manager.stores.records(inSoup: "Account", for: manager.currentStoreOwner)
        for account in accounts.sorted(by: { ($0["Name"]?.stringValue ?? "") < ($1["Name"]?.stringValue ?? "") }) {
            lines.append("│   \(account["Name"]?.stringValue ?? "?") — \(account["Industry"]?.stringValue ?? "")")
        }
        if accounts.isEmpty { lines.append("│   (none)") }
        lines.append("│ Contacts")
        for (index, row) in (contacts?.rows ?? []).enumerated() {
            lines.append("│   \(index + 1). \(row.name ?? row.id)")
        }
        if contacts?.rows.isEmpty ?? true { lines.append("│   (none)") }
        lines.append("└")
        return lines.joined(separator: "\n")
    }

    /// Deletes contact `number` (1-based), as a swipe-to-delete would: the row goes at once and
    /// comes back with the server's message if the delete fails.
    func deleteContact(number: Int) async {
        guard let contacts, contacts.canDelete(row: number - 1) else {
            Console.say("there is no contact \(number)")
            return
        }
        let name = contacts.rows[number - 1].name ?? "?"
        Console.say("delete contact \(number) (\(name))")
        let outcome = await contacts.delete(at: number - 1)
        if let message = outcome.failureMessage {
            Console.say("  refused: \(message)")
        } else {
            Console.say("  deleted \(name)")
        }
        Console.say(render())
    }
}
