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
        // `--help`, an unknown flag or a missing value end here (AppKernelPOSIX's CommandLineTool).
        let arguments = Options.tool.parseOrExit()
        let options: Options
        do { options = try Options(arguments) } catch { Options.tool.refuse(error.description) }
        if options.reset { exit(reset(environment: ProcessInfo.processInfo.environment)) }
        // A bad environment (a trace path that cannot be written, say) is one line, before anything runs.
        do { try ProcessHost.checkEnvironment(ProcessInfo.processInfo.environment) } catch {
            FileHandle.standardError.write(Data("\(error)\n".utf8))
            exit(CommandLineTool.usageExitStatus)
        }
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
        do {
            // The app itself (delegate, SDK manager, org, stores): AccountsWorld.swift.
            let world = try AccountsWorld.make(dataHome: dataDirectory, keyRing: keyRing, options: options)
            let (manager, embeddedOrg, passcodes) = (world.manager, world.embeddedOrg, world.passcodes)
            let configuration = ProcessHost.Configuration(arguments: options.launchArguments,
                                                          log: StandardErrorLogHandler(minimumLevel: .warning))
            let host = try ProcessHost(delegate: world.delegate, configuration: configuration)
            world.attach(to: host.application)
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
