import AppKernelEmbeddedOrg
import AppKernel
import AppKernelCore
import AppKernelAuth
import AppKernelPOSIX
import AppKernelREST
import AppKernelSDK
import Foundation

/// Answers the passcode lock: from a script (the tour), else from the terminal.
@MainActor
final class PasscodePrompt: PasscodeProvider {
    var scripted: [String] = []
    var readsTerminal = false
    /// Why nobody answered the last time the lock asked (no terminal read, the input ended);
    /// `nil` while every prompt was answered.
    private(set) var unanswered: String?

    func passcode(attempt: Int, remaining: Int) async -> String? {
        // Asked again: the last answer was wrong.
        if attempt > 1 { Console.say("wrong passcode") }
        if !scripted.isEmpty {
            let answer = scripted.removeFirst()
            Console.say("passcode asked (attempt \(attempt), \(remaining) left): typing \(String(repeating: "•", count: answer.count))")
            return answer
        }
        guard readsTerminal else {
            unanswered = "the scripted tour answers only its own passcode (\(Driver.tourPasscode)) and reads no terminal; --interactive does"
            return nil
        }
        guard let line = await Console.readSecretLine(prompt: "passcode (attempt \(attempt), \(remaining) left): ") else {
            unanswered = "standard input ended before a passcode was typed"
            return nil
        }
        return line
    }

    /// What happened and how to start over, when the lock asked and nobody answered: the
    /// passcode an earlier `--interactive` run set stays on the data home until it is typed or
    /// the data home is removed (`--reset`).
    func unansweredAdvice(dataHome: URL?) -> String? {
        unanswered.map {
            "a passcode is set on this data home and nobody answered it (\($0)). Type it in `AccountsApp --interactive` (on a terminal), "
                + "or start over with `AccountsApp --reset`, which removes the data home\(dataHome.map { " \($0.path)" } ?? "") (users, stores, the passcode)"
        }
    }
}

/// Plays the user and the system: the scripted tour, or commands typed on standard input.
@MainActor
final class Driver {
    let host: ProcessHost
    let manager: AccountsSDKManager
    let passcodes: PasscodePrompt

    init(host: ProcessHost, manager: AccountsSDKManager, passcodes: PasscodePrompt) {
        self.host = host
        self.manager = manager
        self.passcodes = passcodes
    }

    var application: Application { host.application }
    var controller: AccountsListController? { manager.rootController as? AccountsListController }

    /// The tour: launch → list → a refused delete (row put back) → a delete → an account renamed
    /// offline, kept in the store and synced up when the org is back → background →
    /// foreground behind the passcode lock → switch user → logout → terminate.
    func runTour() async {
        // A passcode the last run set is asked at launch: the tour answers with its own only when
        // it is the one set — a guess at another (an --interactive run's) would count a failure.
        if isTourPasscodeSet { passcodes.scripted = [Self.tourPasscode] }
        guard await waitForLaunch() else { return host.terminate() }
        step("list")
        await list()
        step("delete a contact that has cases (the org refuses; the row comes back)")
        await delete(1)
        step("delete a contact without cases")
        await delete(2)
        step("the org goes away; rename an account offline (it stays in the store)")
        await renameOffline()
        step("the org is back: sync up")
        await syncUp()
        step("set a passcode, go to the background and come back")
        setPasscode(Self.tourPasscode)
        passcodes.scripted = ["1357", Self.tourPasscode]
        background()
        await foreground()
        step("switch user")
        await switchUser()
        step("log out")
        await logout()
        step("quit")
        host.terminate()
    }

    /// The passcode the tour sets (and answers with).
    static let tourPasscode = "2468"

    /// Whether the passcode set is the tour's: checked against the stored hash, so no attempt counts.
    var isTourPasscodeSet: Bool {
        guard let record = try? manager.passcode.record(), record.iterations >= 1, !record.hash.isEmpty else { return false }
        return PBKDF2.deriveKey(password: Array(Self.tourPasscode.utf8), salt: record.salt, iterations: record.iterations,
                                length: record.hash.count) == record.hash
    }

    /// Reads commands until `quit` or the end of the input.
    func runInteractive() async {
        passcodes.readsTerminal = true
        guard await waitForLaunch() else { return host.terminate() }
        Console.say("commands: list, delete N, bg, fg, switch, logout, passcode CODE, quit")
        while true {
            Console.prompt("> ")
            guard let line = await Console.readLine() else { break }
            let words = line.split(separator: " ").map(String.init)
            switch (words.first ?? "", words.count) {
            case ("", _): continue
            case ("list", 1): await list()
            case ("delete", 2):
                guard let number = Int(words[1]) else { Console.say("delete needs a row number"); continue }
                await delete(number)
            case ("bg", 1): background()
            case ("fg", 1): await foreground()
            case ("switch", 1): await switchUser()
            case ("logout", 1): await logout()
            case ("passcode", 2): setPasscode(words[1])
            case ("quit", 1): return host.terminate()
            default: Console.say("unknown command '\(line)'; commands: list, delete N, bg, fg, switch, logout, passcode CODE, quit")
            }
        }
        host.terminate()
    }

    private func step(_ title: String) { Console.say("── \(title)") }

    /// Waits for the SDK manager's launch and the root controller's first load.
    /// Whether the launch (the SDK's phases, the login among them) failed: the app then exits 1.
    private(set) var launchFailed = false

    private func waitForLaunch() async -> Bool {
        // Ready: launched, and the SDK manager's launch (a launch gate) has finished or failed.
        guard await host.waitUntilReady() else {
            launchFailed = true
            return false
        }
        guard manager.launchState == .finished else {
            // The launch error handler has said why; this says what happens now.
            Console.say("the launch did not complete; the app ends with status 1")
            if let advice = passcodes.unansweredAdvice(dataHome: manager.dataDirectory) { Console.say(advice) }
            launchFailed = true
            return false
        }
        Console.say("launched: \(manager.lastResult.map { "\($0.flags)" } ?? "")")
        await controller?.loading?.value
        return true
    }

    private func list() async {
        await controller?.loading?.value
        Console.say(controller?.render() ?? "no list on screen")
    }

    private func delete(_ number: Int) async {
        await controller?.loading?.value
        await controller?.deleteContact(number: number)
    }

    /// Takes the embedded org away and renames the first account in the user's store, as an
    /// edit made without a network would.
    private func renameOffline() async {
        guard case .embedded(let org)? = manager.org, let first = controller?.accountRows().first else {
            return Console.say("nothing to rename")
        }
        org.faults.failAllRequests = true
        do {
            _ = try manager.userStore()?.updateLocally(inSoup: "Account", recordId: first.id, fields: ["Name": .string(first.name + " (renamed offline)")])
            Console.say(controller?.render() ?? "")
            guard let syncs = try manager.syncManager() else { return }
            do {
                _ = try await syncs.syncUp(named: "syncUpAccounts")
            } catch {
                Console.say("sync up failed, the change stays in the store: \(error.reason)")
            }
        } catch {
            Console.say("could not rename: \(error)")
        }
    }

    /// Brings the embedded org back and syncs the store's changes up.
    private func syncUp() async {
        if case .embedded(let org)? = manager.org { org.faults.failAllRequests = false }
        do {
            guard let syncs = try manager.syncManager() else { return Console.say("nobody is logged in") }
            let result = try await syncs.syncUp(named: "syncUpAccounts")
            Console.say("synced up: \(result.updated.count) updated, \(result.created.count) created, \(result.failed.count) refused")
            await controller?.refresh()
        } catch {
            Console.say("sync up failed: \(error)")
        }
    }

    private func setPasscode(_ code: String) {
        do {
            try manager.passcode.setPasscode(code)
            manager.passcode.lockTimeout = .zero
            Console.say("passcode set; the app locks whenever it comes back from the background")
        } catch {
            Console.say("passcode refused: \(error)")
        }
    }

    private func background() {
        do { try application.handle(.enterBackground(scene: nil)) } catch { Console.say("\(error)") }
    }

    private func foreground() async {
        do { try application.handle(.enterForeground(scene: nil)) } catch { return Console.say("\(error)") }
        if let unlock = manager.unlock {
            await unlock.value
            manager.passcode.isLocked ? Console.say("still locked") : Console.say("unlocked")
        }
    }

    /// Switches to the next logged-in user, logging another user in first if there is none.
    private func switchUser() async {
        guard let accountManager = manager.accountManager, let current = accountManager.currentAccount else {
            return Console.say("nobody is logged in")
        }
        let others = accountManager.allAccounts.filter { $0.identity != current.identity }
        do {
            if let next = others.first {
                try accountManager.switchTo(next.identity)
            } else {
                guard let config = manager.bootConfig?.oauthConfig else { return }
                var hint: String?
                if case .embedded(let org)? = manager.org {
                    hint = org.users.first { user in !accountManager.allAccounts.contains { $0.identity.userID == user.userID } }?.username
                }
                Console.say("logging in another user\(hint.map { " (\($0))" } ?? "")")
                _ = try await accountManager.logIn(config: config, using: manager.loginMethod, loginHint: hint, makeCurrent: true)
            }
        } catch {
            return Console.say("could not switch: \(error)")
        }
        await controller?.loading?.value
    }

    private func logout() async {
        guard let current = manager.accountManager?.currentAccount else { return Console.say("nobody is logged in") }
        let isLast = (manager.accountManager?.allAccounts.count ?? 0) <= 1
        Console.say("logging out \(current.userIdentity?.username ?? current.identity.description)"
                    + (isLast ? " — the last user: the app returns to its login, as the Mobile SDK's apps do" : ""))
        await manager.accountManager?.logout(current.identity, reason: .userInitiated)
        if isLast {
            await manager.reauthentication?.value
            if let user = manager.accountManager?.currentAccount {
                Console.say("logged in again as \(user.userIdentity?.username ?? user.identity.description)")
            }
        }
        await controller?.loading?.value
    }
}
