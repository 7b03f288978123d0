import AppKernel
import AppKernelAuth
import AppKernelEmbeddedOrg
import AppKernelSDK
import Foundation

/// What AccountsApp's app is made of — its delegate, its `AccountsSDKManager` set up (the
/// embedded org or a real one, the users' credential store, the key ring, the passcode store,
/// the root controller), on a data home — built the same way for `swift run AccountsApp` (on a
/// `ProcessHost`) and for a test (on a `SimulatedHost`, replaying a journal of a real run, say).
@MainActor
struct AccountsWorld {
    /// The app delegate (its `init` made `SDKManager.shared` an `AccountsSDKManager`).
    let delegate: AppDelegate
    /// The SDK manager, set up; attach it to the application before the launch.
    let manager: AccountsSDKManager
    /// The data home everything lives under.
    let dataHome: URL
    /// The key ring every sealed file of the data home opens through.
    let keyRing: KeyRing
    /// The embedded org, unless the options name a real one.
    let embeddedOrg: EmbeddedOrg?
    /// The passcode answers (scripted, or read from the terminal).
    let passcodes: PasscodePrompt

    /// Builds the app on `dataHome`, opening its key ring with `keyProvider` (a data home of an
    /// earlier version gets its data key; once one exists, a wrong key is an error).
    /// - Throws: `KeyError` for the key ring, or what ``make(dataHome:keyRing:options:)`` throws.
    static func make(dataHome: URL, keyProvider: KeyProvider, options: Options) throws -> AccountsWorld {
        try make(dataHome: dataHome, keyRing: KeyRing(dataHome: dataHome, provider: keyProvider), options: options)
    }

    /// Builds the app on `dataHome` with an open key ring: the org (the embedded one, with what
    /// the last run left on it, unless `options` name a real one), the users' credential store,
    /// the passcode store and the root controller.
    /// - Throws: the embedded org's restore or the credential store's errors.
    static func make(dataHome dataDirectory: URL, keyRing: KeyRing, options: Options) throws -> AccountsWorld {
        let delegate = AppDelegate()
        guard let manager = SDKManager.shared as? AccountsSDKManager else { fatalError("initializeSDK made another manager") }
        let passcodes = PasscodePrompt()
        var embeddedOrg: EmbeddedOrg?
        let transport: any HTTPTransport
        if let loginHost = options.loginHost, let clientID = options.clientID {
            manager.org = .real(loginHost: loginHost, clientID: clientID, redirectURI: options.redirectURI)
            transport = SocketTransport()
        } else {
            // The embedded org keeps its records and refresh tokens beside the app's data, so a
            // relaunch finds what the last run left on the "server".
            let org = EmbeddedOrg.sample()
            let orgFolder = dataDirectory.appendingPathComponent("embedded-org")
            // Its state is sealed with the data home's global key (a plain org.json of an
            // earlier version is sealed on this read).
            if EmbeddedOrg.hasPersistedState(in: orgFolder) { try org.restore(from: orgFolder, keyRing: keyRing) }
            manager.org = .embedded(org)
            embeddedOrg = org
            transport = org
            Console.say("using the embedded org (\(org.users.map(\.username).joined(separator: ", "))) — no network")
        }
        // Users are remembered: their credentials live under the data home, the current user too.
        let accounts = try UserAccountManager(store: FileCredentialStore(root: dataDirectory.appendingPathComponent("accounts"), keyRing: keyRing), transport: transport)
        manager.transport = transport
        manager.dataDirectory = dataDirectory
        // Everything under the data home is sealed with keys wrapped by a master key kept apart
        // from it, in $XDG_CONFIG_HOME/AccountsApp/master.key (made on first use).
        manager.keyRing = keyRing
        // One instance a data home: a second one is refused ("already running as pid N with
        // data home …") and the host ends it with exit status 75.
        manager.requiresSingleInstance = true
        manager.accountManager = accounts
        // The embedded org approves at once; a real org shows its login page in the browser
        // (or, with --device, a code to enter on another device).
        manager.loginMethod = options.loginHost == nil ? .autoApprove() : options.deviceFlow ? .deviceFlow : .loopback()
        manager.configDirectory = Bundle.module.url(forResource: "Resources", withExtension: nil)
        manager.passcodeProvider = passcodes
        // The passcode protects the app across launches: its hash lives beside the users.
        manager.passcode.store = FilePasscodeStore(url: dataDirectory.appendingPathComponent("passcode.json"), keyRing: keyRing)
        // The factory lives in the manager: it must not keep the manager alive (nor the root,
        // which the manager holds).
        manager.rootControllerFactory = { [unowned manager] user in AccountsListController(user: user, manager: manager) }
        manager.launchErrorHandler = { error in Console.say("launch error: \(error.summary)") }
        return AccountsWorld(delegate: delegate, manager: manager, dataHome: dataDirectory, keyRing: keyRing,
                             embeddedOrg: embeddedOrg, passcodes: passcodes)
    }

    /// Attaches the SDK manager to `application` (before its launch), as the Mobile SDK observes
    /// its `UIApplication`.
    func attach(to application: Application) { manager.attach(to: application) }
}
