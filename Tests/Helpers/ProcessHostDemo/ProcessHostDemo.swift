// A child process for AppKernelPOSIXTests: an AppKernel app run by ProcessHost, printing each
// callback on its own line ("scene.didBecomeActive", "app.willTerminate", …). Environment:
//   APPKERNEL_TERMINATION_DEADLINE_MS  the graceful-termination deadline
//   DEMO_HANG_ON_TERMINATE=1           willTerminate never returns (the deadline forces the exit)
//   DEMO_BLOCK_MAIN_MS=n               after launch, block the main actor for n ms (watchdog pings stop)
//   DEMO_PSI_PATH=path                 read memory pressure from this PSI file, every 50 ms
//   DEMO_SDK_CONFIG=dir                attach an SDK manager whose bootconfig.json lives in dir
//   DEMO_USR2_TERMINATES=1             map SIGUSR2 to termination and leave SIGUSR1 to the system
//   DEMO_PHASES=1                      print "phase <engine>.<phase> began" as each phase begins
//   DEMO_STAY_UP=1                     an unhandled error (a failed SDK launch) is logged but does not end the process
//   DEMO_SINGLE_INSTANCE=dir           the SDK manager runs in single-instance mode with its data home in dir
//   DEMO_HOLD=line                     after printing this line, block the main actor until a line
//                                      arrives on standard input (a test's signal lands in that moment)
import AppKernel
import AppKernelPOSIX
import AppKernelSDK
import Foundation

@MainActor
func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
    if line == ProcessInfo.processInfo.environment["DEMO_HOLD"] {
        _ = readLine()   // the main actor is held here, mid-phase or mid-callback, until the test says so
    }
}

@MainActor
final class DemoSceneDelegate: SceneDelegate {
    func scene(_ scene: Scene, willConnectTo session: SceneSession, options: SceneConnectionOptions) { say("scene.willConnect") }
    func sceneWillEnterForeground(_ scene: Scene) { say("scene.willEnterForeground") }
    func sceneDidBecomeActive(_ scene: Scene) { say("scene.didBecomeActive") }
    func sceneWillResignActive(_ scene: Scene) { say("scene.willResignActive") }
    func sceneDidEnterBackground(_ scene: Scene) { say("scene.didEnterBackground") }
    func sceneDidDisconnect(_ scene: Scene) { say("scene.didDisconnect") }
}

@MainActor
final class DemoDelegate: ApplicationDelegate {
    let environment = ProcessInfo.processInfo.environment

    func application(_ application: Application, didFinishLaunchingWithOptions options: LaunchOptions) -> Bool {
        say("app.didFinishLaunching(\(options.url?.absoluteString ?? "-"))")
        if let milliseconds = environment["DEMO_BLOCK_MAIN_MS"].flatMap(UInt32.init) {
            Task { @MainActor in
                await Task.yield()
                say("demo.blocking")
                usleep(milliseconds * 1000)   // the main actor is stuck: no watchdog pings meanwhile
                say("demo.unblocked")
            }
        }
        return true
    }

    func application(_ application: Application, configurationForConnecting session: SceneSession,
                     options: SceneConnectionOptions) -> SceneConfiguration {
        SceneConfiguration(name: "Demo") { DemoSceneDelegate() }
    }

    func applicationDidReceiveMemoryWarning(_ application: Application) { say("app.memoryWarning") }

    func applicationWillTerminate(_ application: Application) {
        say("app.willTerminate")
        if environment["DEMO_HANG_ON_TERMINATE"] == "1" {
            while true { usleep(100_000) }
        }
    }
}

/// Keeps the phase announcer registered for the process's life.
@MainActor var phaseAnnouncer: ListenerToken?

@main
enum ProcessHostDemo {
    @MainActor
    static func main() async {
        let environment = ProcessInfo.processInfo.environment
        var configuration = ProcessHost.Configuration(log: StandardErrorLogHandler(minimumLevel: .info))
        if environment["DEMO_USR2_TERMINATES"] == "1" {
            configuration.signalActions[SIGUSR2] = .terminate
            configuration.signalActions[SIGUSR1] = nil
        }
        configuration.exitsOnUnhandledError = environment["DEMO_STAY_UP"] != "1"
        if let milliseconds = environment["APPKERNEL_TERMINATION_DEADLINE_MS"].flatMap(Int.init) {
            configuration.terminationDeadline = .milliseconds(milliseconds)
        }
        configuration.memoryPressure = environment["DEMO_PSI_PATH"].map {
            MemoryPressureSource(psiPath: $0, cgroupEventsPath: "/nonexistent", cgroupPressurePath: "/nonexistent", psiThreshold: 10,
                                 pollInterval: .milliseconds(50), minimumInterval: .zero)
        }
        do {
            let host = try ProcessHost(delegate: DemoDelegate(), configuration: configuration)
            host.onConfigurationChange = { say("host.reload") }
            if environment["DEMO_PHASES"] == "1" {
                phaseAnnouncer = host.application.addPipelineObserver { stage, event in
                    if case .phases(let engine) = stage, case .phase(let phase) = event { say("phase \(engine).\(phase) began") }
                }
            }
            if let directory = environment["DEMO_SDK_CONFIG"] {
                let manager = SDKManager(configDirectory: URL(fileURLWithPath: directory))
                if let dataHome = environment["DEMO_SINGLE_INSTANCE"] {
                    manager.dataDirectory = URL(fileURLWithPath: dataHome)
                    // Nothing is sealed by this demo: a key of its own opens the (empty) key ring.
                    manager.keyRing = try KeyRing(dataHome: URL(fileURLWithPath: dataHome), provider: .inMemory(try SecretKey.random()))
                    manager.requiresSingleInstance = true
                }
                manager.attach(to: host.application)   // its launch is a launch gate; SIGHUP reloads its boot config
                host.onConfigurationChange = { say("host.reload(\(manager.bootConfig?.remoteAccessConsumerKey ?? "-"))") }
            }
            let status = await host.run()
            say("host.exit(\(status))")
            exit(status)
        } catch {
            FileHandle.standardError.write(Data("demo: \(error)\n".utf8))
            exit(2)
        }
    }
}
