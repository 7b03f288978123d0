import AppKernel
import AppKernelAuth
import AppKernelCore
import AppKernelEmbeddedOrg
import AppKernelREST
import AppKernelSDK
import AppKernelSDKTesting
import AppKernelTesting
import Foundation

/// Section 13: the lifecycle explorer's speed (issue 32) — schedules a second and distinct states
/// for a kernel-only app (its delegate works in its callbacks: `settleYields` 0) and for the
/// ported forceios template (its SDK manager subclass, a root controller factory, stores in a
/// data home, each user's REST client from the embedded org), and where a template run's time goes.
///
/// The breakdown runs the explorer's breadth-first search again through a copy of its run loop
/// (`LifecycleExplorer.run`, explore mode) built on the public API, timing each part; its
/// schedules and states are checked against the explorer's own report, so it times the same runs.
@MainActor
enum ExplorerBenchmark {
    /// Measures and prints section 13; returns its targets.
    static func report(quick: Bool) async throws -> [(String, Bool)] {
        let rounds = quick ? 2 : 5
        var targets: [(String, Bool)] = []

        // 1. The kernel-only app, exhaustive to depth 4, then random walks.
        let kernel = LifecycleExplorer(world: { KernelOnlyApp.makeWorld() }, steps: .system, invariants: .standard)
        _ = try await kernel.check(depth: 2, budget: .seconds(30), walkDepth: 0)    // warm-up
        let kernelDepth = 4
        var exhaustive: [ExplorationReport] = []
        for _ in 0..<rounds {
            exhaustive.append(try await kernel.check(depth: kernelDepth, budget: .seconds(120), walkDepth: 0))
            await Measure.settle()
        }
        let walkSchedules = quick ? 2_000 : 20_000, walkDepth = 8
        var walks: [ExplorationReport] = []
        for round in 0..<rounds {
            walks.append(try await kernel.check(depth: 0, budget: .schedules(walkSchedules), seed: UInt64(round + 1), walkDepth: walkDepth))
            await Measure.settle()
        }
        let kernelParts = try await Breakdown.measure(world: { KernelOnlyApp.makeWorld() }, steps: .system, depth: kernelDepth)
        try check(kernelParts, against: exhaustive[0], what: "kernel-only app")

        // 2. The ported template: SDK manager subclass, root factory, embedded org's REST clients;
        // its data homes in the temporary directory, then (where there is one) on tmpfs.
        let org = EmbeddedOrg.sample()
        let clients = ["005A": try await org.loggedInClient(username: "ada@acme.com"),
                       "005B": try await org.loggedInClient(username: "bob@beta.com")]
        let config = try TemplateApp.writeConfig()
        defer { try? FileManager.default.removeItem(at: config) }
        let sdkSteps: StepSet = .system + .sdk(passcodeAnswers: ["1111", "0000"])
        let templateDepth = quick ? 2 : 3
        var homes = [(name: "data homes in \(FileManager.default.temporaryDirectory.path) (\(fileSystem(of: FileManager.default.temporaryDirectory)))",
                      root: FileManager.default.temporaryDirectory)]
        let shm = URL(fileURLWithPath: "/dev/shm")
        if access(shm.path, W_OK) == 0, fileSystem(of: shm) == "tmpfs" { homes.append((name: "data homes on tmpfs (/dev/shm)", root: shm)) }
        var templates: [(name: String, reports: [ExplorationReport], parts: Breakdown)] = []
        for home in homes {
            let makeTemplate: LifecycleExplorer.WorldFactory = { try TemplateApp.makeWorld(config: config, clients: clients, root: home.root) }
            let template = LifecycleExplorer(world: makeTemplate, steps: sdkSteps, invariants: .standard)
            _ = try await template.check(depth: 1, budget: .seconds(30), walkDepth: 0)   // warm-up
            var reports: [ExplorationReport] = []
            for _ in 0..<(quick ? 1 : 3) {
                reports.append(try await template.check(depth: templateDepth, budget: .seconds(300), walkDepth: 0))
                await Measure.settle()
            }
            let parts = try await Breakdown.measure(world: makeTemplate, steps: sdkSteps, depth: templateDepth)
            try check(parts, against: reports[0], what: "ported template, \(home.name)")
            templates.append((home.name, reports, parts))
        }

        let rate = { (reports: [ExplorationReport]) in Stats(reports.map(\.schedulesPerSecond)) }
        let kernelRate = rate(exhaustive), walkRate = rate(walks)
        let first = exhaustive[0], firstWalk = walks[0]
        let exhaustedDepth = { (report: ExplorationReport) in report.exhaustedDepth.map(String.init) ?? "-" }
        print(AppKernelBenchmarks.table(
            title: "Lifecycle explorer (one core, the main actor; each schedule a fresh world in a fresh scope; schedules/s best / median of \(rounds) rounds"
                + (quick ? "" : ", the template's of 3") + ")",
            header: ["app, search", "schedules/s", "schedules", "distinct states", "exhaustive depth", "per schedule (median)"],
            rows: [
                Row(name: "kernel-only (settleYields 0), .system, exhaustive", values: [
                    rateText(kernelRate), "\(first.schedules)", "\(first.distinctStates)", exhaustedDepth(first), Format.time(1 / kernelRate.median)]),
                Row(name: "kernel-only, random walks of \(walkDepth) steps", values: [
                    rateText(walkRate), "\(firstWalk.schedules)", "\(firstWalk.distinctStates)", "-", Format.time(1 / walkRate.median)]),
            ] + templates.map { template in
                let templateRate = rate(template.reports), report = template.reports[0]
                return Row(name: "ported template, .system + .sdk(passcodeAnswers:), exhaustive; \(template.name)", values: [
                    rateText(templateRate), "\(report.schedules)", "\(report.distinctStates)", exhaustedDepth(report), Format.time(1 / templateRate.median)])
            }))
        for (name, parts) in [("kernel-only app", kernelParts)] + templates.map({ ("ported template, \($0.name)", $0.parts) }) {
            print(parts.table(title: "  where a run's time goes, \(name) (the same \(parts.schedules) schedules, timed part by part; "
                                  + String(format: "%.0f schedules/s in this timed copy)", parts.schedulesPerSecond)))
        }
        if let violation = (exhaustive + templates.flatMap(\.reports)).first(where: { $0.firstViolation != nil }) {
            print("  a violation was found, so the figures stop short:\n\(violation)")
        }
        print("")
        targets.append((String(format: "the explorer runs ≥ 5,000 schedules a second on one core for a kernel-only app (median %.0f/s, exhaustive to depth %d)",
                               kernelRate.median, kernelDepth), kernelRate.median >= 5_000))
        return targets
    }

    /// The type of the file system `url` is on (`/proc/self/mounts`' longest mount point above it).
    static func fileSystem(of url: URL) -> String {
        guard let mounts = try? String(contentsOfFile: "/proc/self/mounts", encoding: .utf8) else { return "unknown file system" }
        let path = url.resolvingSymlinksInPath().path
        var best: (point: String, type: String)?
        for line in mounts.split(separator: "\n") {
            let fields = line.split(separator: " ").map(String.init)
            guard fields.count > 2 else { continue }
            let point = fields[1], prefix = point.hasSuffix("/") ? point : point + "/"
            guard path == point || path.hasPrefix(prefix), point.count > (best?.point.count ?? -1) else { continue }
            best = (point, fields[2])
        }
        return best?.type ?? "unknown file system"
    }

    static func rateText(_ stats: Stats) -> String { String(format: "%.0f / %.0f", stats.samples.max() ?? .nan, stats.median) }

    /// The timed copy must have run what the explorer ran.
    static func check(_ parts: Breakdown, against report: ExplorationReport, what: String) throws {
        guard parts.schedules == report.schedules, parts.states == report.distinctStates else {
            throw JournalBenchmark.BenchmarkFailure("explorer benchmark, \(what): the timed copy ran \(parts.schedules) schedules to "
                                                    + "\(parts.states) states, the explorer \(report.schedules) to \(report.distinctStates): "
                                                    + "the copy of LifecycleExplorer.run has drifted from it; update Breakdown")
        }
    }
}

// MARK: The kernel-only app

/// A small app that does all its work in its callbacks: it saves its draft in the background
/// under a background task it ends at once, drops its cache on a memory warning, answers pushes,
/// fetches and quick actions at once, and keeps the URLs it opened.
@MainActor
enum KernelOnlyApp {
    final class Delegate: ApplicationDelegate {
        var draft = 0, saved = 0, cache: [Int] = []
        var opened: [URL] = []

        func application(_ application: Application, didFinishLaunchingWithOptions options: LaunchOptions) -> Bool {
            cache = Array(0..<16)
            return true
        }

        func applicationWillResignActive(_ application: Application) { draft += 1 }

        func applicationDidEnterBackground(_ application: Application) {
            let task = application.beginBackgroundTask(name: "save draft")
            saved = draft
            application.endBackgroundTask(task)
        }

        func applicationDidReceiveMemoryWarning(_ application: Application) { cache.removeAll() }

        func application(_ application: Application, open url: URL, options: OpenURLOptions) -> Bool {
            opened.append(url)
            return true
        }

        func application(_ application: Application, didReceiveRemoteNotification userInfo: [String: JSONValue],
                         fetchCompletionHandler completionHandler: @escaping @MainActor @Sendable (BackgroundFetchResult) -> Void) {
            completionHandler(.newData)
        }

        func application(_ application: Application,
                         performFetchWithCompletionHandler completionHandler: @escaping @MainActor @Sendable (BackgroundFetchResult) -> Void) {
            completionHandler(.noData)
        }

        func application(_ application: Application, performActionFor shortcutItem: ShortcutItem,
                         completionHandler: @escaping @MainActor @Sendable (Bool) -> Void) {
            completionHandler(true)
        }

        func application(_ application: Application, configurationForConnecting session: SceneSession,
                         options: SceneConnectionOptions) -> SceneConfiguration {
            SceneConfiguration(name: "Main") { SceneDelegate() }
        }
    }

    final class SceneDelegate: AppKernel.SceneDelegate {
        var window: Window?
        func scene(_ scene: Scene, willConnectTo session: SceneSession, options: SceneConnectionOptions) {
            window = Window(windowScene: scene)
            window?.rootController = PlaceholderController(message: "")
            window?.makeKeyAndVisible()
        }

        func windowScene(_ scene: Scene, performActionFor shortcutItem: ShortcutItem,
                         completionHandler: @escaping @MainActor @Sendable (Bool) -> Void) {
            completionHandler(true)
        }
    }

    static func makeWorld() -> ExplorerWorld {
        let world = ExplorerWorld(expression: "KernelOnlyApp.makeWorld()") { _ in Delegate() }
        world.settleYields = 0
        return world
    }
}

// MARK: The ported template

/// The forceios template as "Porting the forceios template" ports it (PortingGuideTests' app):
/// its `MobileSyncSDKManager` subclass, an app delegate that hands the SDK its config, data home,
/// key ring, users and root controller factory, and a scene delegate that shows an empty screen
/// on every foreground and builds the root when `loginIfRequired` answers and on every user
/// change — with each user's REST client from the embedded org (`restClientProvider`), as the
/// ported template's tests give it.
@MainActor
enum TemplateApp {
    /// The template's `MobileSyncSDKManager`; it times its launch phases while ``PhaseTimer/current`` is set.
    final class AppSDKManager: SDKManager {
        override func run(_ phase: LaunchPhase) async throws {
            guard let timer = PhaseTimer.current else { return try await super.run(phase) }
            let start = ContinuousClock.now, step = timer.step
            defer { timer.add(phase, Measure.seconds(ContinuousClock.now - start), sameStep: timer.step == step) }
            try await super.run(phase)
        }
    }

    final class AccountsListController: RootController {
        let user: String?
        init(user: UserAccount?) { self.user = user?.identity.userID }
    }

    /// What `AppResources` holds in the template: here, the world's.
    final class Resources {
        let config: URL, data: URL, keyRing: KeyRing
        let accounts: any AccountManaging
        let clients: [String: RestClient]
        init(config: URL, data: URL, keyRing: KeyRing, accounts: any AccountManaging, clients: [String: RestClient]) {
            self.config = config
            self.data = data
            self.keyRing = keyRing
            self.accounts = accounts
            self.clients = clients
        }
    }

    final class AppDelegate: ApplicationDelegate {
        let resources: Resources
        init(resources: Resources) {
            self.resources = resources
            try? AppSDKManager.initializeSDK()
        }

        func application(_ application: Application, didFinishLaunchingWithOptions options: LaunchOptions) -> Bool {
            SDKManager.shared.configDirectory = resources.config
            SDKManager.shared.dataDirectory = resources.data
            SDKManager.shared.keyRing = resources.keyRing
            SDKManager.shared.accountManager = resources.accounts
            let clients = resources.clients
            SDKManager.shared.restClientProvider = { account in clients[account.identity.userID] }
            SDKManager.shared.rootControllerFactory = { user in AccountsListController(user: user) }
            return true
        }

        func application(_ application: Application, configurationForConnecting session: SceneSession,
                         options: SceneConnectionOptions) -> SceneConfiguration {
            SceneConfiguration(name: "Default Configuration") { SceneDelegate() }
        }
    }

    final class SceneDelegate: AppKernel.SceneDelegate {
        var window: Window?

        func scene(_ scene: Scene, willConnectTo session: SceneSession, options: SceneConnectionOptions) {
            window = Window(windowScene: scene)
            SDKManager.shared.window = window
            SDKManager.shared.registerBlock(forCurrentUserChangeNotifications: { [weak self] in
                self?.setupRootViewController()
            })
        }

        func sceneWillEnterForeground(_ scene: Scene) {
            window?.rootController = PlaceholderController(message: "")
            window?.makeKeyAndVisible()
            SDKManager.shared.loginIfRequired { [weak self] _ in self?.setupRootViewController() }
        }

        func setupRootViewController() { try? SDKManager.shared.setupRootController() }
    }

    /// The template's world: its resources (the delegate reads them at every launch).
    final class World: SDKWorld {
        var resources: Resources?
    }

    /// The port's config files (bootconfig.json, userstore.json, usersyncs.json), read by every
    /// launch: written once.
    static func writeConfig() throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("explorer-bench-config-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let files = [
            "bootconfig.json": #"{"remoteAccessConsumerKey": "3MVG9-your-consumer-key", "oauthRedirectURI": "http://localhost:1717/OauthRedirect", "oauthScopes": ["api", "refresh_token"]}"#,
            "userstore.json": #"{"soups": [{"soupName": "Account", "indexes": [{"path": "Id", "type": "string"}, {"path": "Name", "type": "string"}]}]}"#,
            "usersyncs.json": #"{"syncs": [{"syncName": "syncDownAccounts", "syncType": "syncDown", "soupName": "Account", "target": {"type": "soql", "query": "SELECT Id, Name FROM Account"}, "options": {"mergeMode": "OVERWRITE"}}]}"#,
        ]
        for (name, text) in files { try Data(text.utf8).write(to: folder.appendingPathComponent(name)) }
        return folder
    }

    /// The template's world: its own data home (a folder under `root`, sealed with a key held in
    /// memory, removed at tear-down), users 005A (current) and 005B, passcode 1111 (10 attempts).
    static func makeWorld(config: URL, clients: [String: RestClient], root: URL) throws -> ExplorerWorld {
        let folder = root.appendingPathComponent("explorer-bench-\(UUID().uuidString)")
        let home = try DataHome(url: folder.appendingPathComponent("data"))
        let keyRing = try KeyRing(dataHome: home.url, provider: .inMemory(SecretKey.random()))
        let world = try World(expression: "try TemplateApp.makeWorld()", manager: AppSDKManager.self, users: ["005A", "005B"],
                              passcode: "1111") { world in AppDelegate(resources: (world as! World).resources!) }
        world.onTearDown { try? FileManager.default.removeItem(at: folder) }
        world.resources = Resources(config: config, data: home.url, keyRing: keyRing, accounts: world.accounts, clients: clients)
        return world
    }
}
