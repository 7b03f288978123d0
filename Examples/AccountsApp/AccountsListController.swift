import AppKernel
import AppKernelAuth
import AppKernelREST
import AppKernelSDK
import Foundation

/// The root controller — the template's `RootViewController`, rendered as text: the current
/// user's accounts (synced down into their SmartStore by `usersyncs.json`'s `syncDownAccounts`,
/// read back with the template's Smart SQL query) and their contacts (a `RecordList` over REST,
/// deleted optimistically with rollback).
@MainActor
final class AccountsListController: RootController {
    let user: UserAccount?
    /// The manager that built it (not kept alive by it: the manager holds its root).
    private(set) weak var manager: AccountsSDKManager?
    private(set) var contacts: RecordList?
    private(set) var syncedAccounts = 0
    /// The sync and load started when the controller appeared.
    private(set) var loading: Task<Void, Never>?
    /// Whether no sync and load runs (the explorer waits for it between steps).
    private(set) var loadingFinished = true

    init(user: UserAccount?, manager: AccountsSDKManager) {
        self.user = user
        self.manager = manager
    }

    var username: String { user?.userIdentity?.username ?? user?.identity.description ?? "nobody" }

    func viewDidAppear() {
        Console.say("root controller appeared for \(username)")
        loadingFinished = false
        loading = Task {
            await self.refresh()
            self.loadingFinished = true
        }
    }

    func viewDidDisappear() {
        loading?.cancel()
    }

    /// The template's `AccountsListModel` query: the rows come from the store, not the network.
    static let accountsQuery = "select {Account:Name}, {Account:Industry}, {Account:Id}, {Account:__local__} from {Account} order by {Account:Name}"

    /// Syncs the accounts down into the user's SmartStore (`usersyncs.json`'s `syncDownAccounts`,
    /// resumed from its last `maxTimeStamp`) and loads the contacts, then shows the list. Offline,
    /// the list shows what the store holds.
    func refresh() async {
        guard user != nil, let manager, let client = manager.restClientForCurrentUser() else {
            Console.say("nobody is logged in")
            return
        }
        do {
            if let syncs = try manager.syncManager() {
                do {
                    let state = try await syncs.reSync(named: "syncDownAccounts")
                    syncedAccounts = state.totalSize
                    Console.say("synced down \(state.totalSize) new or changed account(s) into the store of \(username)")
                } catch {
                    Console.say("sync down failed, showing the store: \(error.reason)")
                }
            }
            let list = RecordList(client: client, query: "SELECT Id, Name FROM Contact ORDER BY Name")
            list.onChange = { change in
                switch change {
                case .removed(let index, _): Console.say("  row \(index + 1) removed (optimistic delete)")
                case .inserted(let index, _): Console.say("  row \(index + 1) put back")
                case .reloaded: break
                }
            }
            do {
                try await list.load()
                contacts = list
            } catch {
                Console.say("could not load the contacts: \(error)")
            }
            Console.say(render())
        } catch {
            Console.say("could not open the store: \(error)")
        }
    }

    /// The accounts in the store: name, industry, id, and whether they changed locally.
    func accountRows() -> [(name: String, industry: String, id: String, local: Bool)] {
        guard let rows = try? manager?.userStore()?.query(.smart(Self.accountsQuery, pageSize: 1000)) else { return [] }
        return rows.compactMap { row in
            guard case .array(let values) = row, values.count == 4 else { return nil }
            return (values[0].stringValue ?? "?", values[1].stringValue ?? "", values[2].stringValue ?? "", values[3] == .bool(true) || values[3] == .int(1))
        }
    }

    /// The screen, as text.
    func render() -> String {
        var lines = ["┌ Accounts of \(username)"]
        let accounts = accountRows()
        for account in accounts {
            lines.append("│   \(account.name) — \(account.industry)\(account.local ? "  (changed here, not synced up yet)" : "")")
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
