// The Accounts app — the forceios Swift template, headless on Linux. `swift run AccountsApp`
// runs a scripted tour against the embedded org and exits 0; see `--help` for the rest. Its data
// (users, SmartStore, the embedded org's state) lives under the user's data home
// ($XDG_DATA_HOME/AccountsApp or ~/.local/share/AccountsApp) and survives a relaunch; its master
// key lives apart ($XDG_CONFIG_HOME/AccountsApp/master.key, or a systemd credential).
import AppKernel
import AppKernelAuth
import AppKernelPOSIX
import AppKernelREST
import AppKernelEmbeddedOrg
import AppKernelSDK
import Foundation

@main
enum AccountsApp {
    @MainActor
    static func main() async {
        let options: Options
        do {
            options = try Options(Array(CommandLine.arguments.dropFirst()))
            if options.help {
                print(Options.usage)
                exit(0)
            }
            try ProcessHost.checkEnvironment(ProcessInfo.processInfo.environment)
        } catch {
            FileHandle.standardError.write(Data("\(error)\n".utf8))
            exit(64)
        }
        let delegate = AppDelegate()
        guard let manager = SDKManager.shared as? AccountsSDKManager else { fatalError("initializeSDK made another manager") }
        // The data home is checked like ssh's StrictModes: a linked, foreign or open folder is
        // refused with the fix, never followed or chmodded (AppKernelCore's DataHome).
        let dataDirectory: URL
        do { dataDirectory = try DataHome.forApp("AccountsApp").url } catch {
            FileHandle.standardError.write(Data("AccountsApp: \(error)\n".utf8))
            exit(1)
        }
        // The master key (a key file apart from the data home, or systemd's credential) opens
        // the key ring once; a missing or wrong one stops the app before anything is read.
        let keyRing: KeyRing
        var provider: KeyProvider?
        do {
            let chosen = try keyProvider(environment: ProcessInfo.processInfo.environment)
            provider = chosen
            // An earlier version's data home (no data key yet) gets a master key; once a data key
            // exists, a missing or wrong master key is an error, never a new key.
            keyRing = try KeyRing(dataHome: dataDirectory, provider: chosen)
        } catch {
            FileHandle.standardError.write(Data("AccountsApp: \(error)\n".utf8))
            if let provider { FileHandle.standardError.write(Data(keyAdvice(provider: provider, dataHome: dataDirectory).utf8)) }
            exit(1)
        }
        Console.say("master key: \(keyRing.provider)")
        let passcodes = PasscodePrompt()
        var embeddedOrg: EmbeddedOrg?
        do {
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
            manager.rootControllerFactory = { user in AccountsListController(user: user, manager: manager) }
            manager.launchErrorHandler = { error in Console.say("launch error: \(error.summary)") }

            let configuration = ProcessHost.Configuration(arguments: options.launchArguments,
                                                          log: StandardErrorLogHandler(minimumLevel: .warning))
            let host = try ProcessHost(delegate: delegate, configuration: configuration)
            manager.attach(to: host.application)
            let driver = Driver(host: host, manager: manager, passcodes: passcodes)
            let script = Task { options.interactive ? await driver.runInteractive() : await driver.runTour() }
            let hostStatus = await host.run()
            script.cancel()
            // A launch that failed (a refused login, say) ends the app gracefully, but not well.
            var status = hostStatus == 0 && driver.launchFailed ? 1 : hostStatus
            // A second instance refused by the single-instance lock writes nothing: the data is
            // the running instance's.
            if let embeddedOrg, manager.holdsInstanceLock {
                // It holds the users' refresh tokens: a failed write is said, and the exit says it too.
                do { try embeddedOrg.persist(to: dataDirectory.appendingPathComponent("embedded-org"), keyRing: keyRing) } catch {
                    FileHandle.standardError.write(Data("AccountsApp: the embedded org's records and tokens were NOT saved: \(error)\n".utf8))
                    if status == 0 { status = 1 }
                }
            }
            switch host.timelineExport {
            case .written(let path): Console.say("launch timeline written to \(path)")
            case .failed(let path, let reason): Console.say("launch timeline NOT written to \(path): \(reason)")
            case nil: break
            }
            Console.say("terminated (exit \(status))")
            exit(status)
        } catch {
            FileHandle.standardError.write(Data("AccountsApp: \(error)\n".utf8))
            exit(1)
        }
    }
}
