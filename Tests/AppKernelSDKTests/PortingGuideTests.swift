// The porting guide's code (Sources/AppKernelSDK/AppKernelSDK.docc/PortingTheForceiosTemplate.md),
// as written, and a test that runs it.
import AppKernel
import AppKernelCore
import AppKernelSDK
import Foundation
import Testing
import TestSupport
import AppKernelAuth
import AppKernelSDKTesting
import AppKernelTesting

/// The template's `MobileSyncSDKManager`: the app's subclass of the SDK manager.
@MainActor
final class AppSDKManager: SDKManager {}

@MainActor
final class AppDelegate: ApplicationDelegate {
    init() {
        try? AppSDKManager.initializeSDK()
    }

    func application(_ application: Application, didFinishLaunchingWithOptions options: LaunchOptions) -> Bool {
        SDKManager.shared.configDirectory = AppResources.configDirectory   // bootconfig.json, userstore.json, usersyncs.json
        SDKManager.shared.dataDirectory = AppResources.dataDirectory       // the stores: under the data home
        SDKManager.shared.keyRing = AppResources.keyRing                   // what seals them
        SDKManager.shared.accountManager = AppResources.accounts
        SDKManager.shared.rootControllerFactory = { user in AccountsListController(user: user) }
        return true
    }

    func application(_ application: Application, configurationForConnecting session: SceneSession,
                     options: SceneConnectionOptions) -> SceneConfiguration {
        SceneConfiguration(name: "Default Configuration") { SceneDelegate() }
    }

    func application(_ application: Application, didRegisterForRemoteNotificationsWithDeviceToken deviceToken: Data) {}

    func application(_ application: Application, open url: URL, options: OpenURLOptions) -> Bool { false }
}

@MainActor
final class SceneDelegate: AppKernel.SceneDelegate {
    var window: Window?

    func scene(_ scene: Scene, willConnectTo session: SceneSession, options: SceneConnectionOptions) {
        window = Window(windowScene: scene)
        SDKManager.shared.window = window
        SDKManager.shared.registerBlock(forCurrentUserChangeNotifications: { [weak self] in
            self?.resetViewState { self?.setupRootViewController() }
        })
    }

    func sceneWillEnterForeground(_ scene: Scene) {
        initializeAppViewState()
        SDKManager.shared.loginIfRequired { [weak self] _ in
            self?.setupRootViewController()
        }
    }

    func initializeAppViewState() {
        window?.rootController = PlaceholderController(message: "")
        window?.makeKeyAndVisible()
    }

    func setupRootViewController() {
        try? SDKManager.shared.setupRootController()
    }

    func resetViewState(_ postResetBlock: @escaping @MainActor () -> Void) {
        postResetBlock()
    }
}

/// Where the app keeps its files, and who its users are. `main` calls ``setUp(app:configDirectory:environment:)``
/// once, before the launch; a test sets its own. The values live in a `SharedScope` slot, as
/// `SDKManager.shared` does, so each test has its own and the app's tests run in parallel.
@MainActor
enum AppResources {
    final class Values {
        var configDirectory: URL?
        var dataDirectory: URL?
        var keyRing: KeyRing?
        var accounts: (any AccountManaging)?
    }
    private static let process = Values()
    private static let key = SharedScope.Key<Values>("AppResources")
    private static var values: Values { SharedScope.resolve(key, make: { Values() }, process: { process }) }

    static var configDirectory: URL? { get { values.configDirectory } set { values.configDirectory = newValue } }
    static var dataDirectory: URL? { get { values.dataDirectory } set { values.dataDirectory = newValue } }
    static var keyRing: KeyRing? { get { values.keyRing } set { values.keyRing = newValue } }
    static var accounts: (any AccountManaging)? { get { values.accounts } set { values.accounts = newValue } }

    /// The app's own: its data home (`$XDG_DATA_HOME/<app>` or `~/.local/share/<app>`, created
    /// 0700 and checked), its master key apart from the data (`$XDG_CONFIG_HOME/<app>/master.key`,
    /// made on the first run), and its users' credentials, sealed in the data home. A folder or a
    /// key it cannot trust throws, naming the path and the fix.
    static func setUp(app: String, configDirectory: URL,
                      environment: [String: String] = ProcessInfo.processInfo.environment) throws {
        let home = try DataHome.forApp(app, environment: environment)
        let keyRing = try KeyRing(dataHome: home.url, provider: .keyFile(application: app, environment: environment))
        let credentials = FileCredentialStore(root: try home.directory("accounts"), keyRing: keyRing)
        Self.configDirectory = configDirectory
        Self.dataDirectory = home.url
        Self.keyRing = keyRing
        Self.accounts = try UserAccountManager(store: credentials, transport: SocketTransport())
    }
}

@MainActor
final class AccountsListController: RootController {
    let user: String?
    init(user: UserAccount?) { self.user = user?.identity.userID }
}

extension SharedManagerTests {
    @Test func theForceiosTemplatePortedLineByLineBuildsTheRootOncePerLaunchForegroundAndUserChange() async throws { try await inOwnScope {
        let directory = try configDirectory(["bootconfig.json": #"{"remoteAccessConsumerKey": "3MVG9-test", "oauthRedirectURI": "testapp://callback"}"#,
                                             "userstore.json": userstoreJSON, "usersyncs.json": usersyncsJSON])
        defer { try? FileManager.default.removeItem(at: directory) }
        let accounts = FakeAccountManager()
        for user in ["005A", "005B", "005C"] { accounts.add(user, current: user == "005A") }
        AppResources.configDirectory = directory
        AppResources.accounts = accounts
        defer { AppResources.accounts = nil }
        let clock = TestClock()
        let host = SimulatedHost(clock: clock)
        // initializeSDK() (in the delegate's init) and the launch run without a suspension between.
        let app = try host.launch(delegate: AppDelegate())
        let manager = try #require(SDKManager.shared as? AppSDKManager)
        #expect(manager.application === app)
        var builds: [String?] = []
        let factory = try #require(manager.rootControllerFactory)
        manager.rootControllerFactory = { user in
            builds.append(user?.identity.userID)
            return factory(user)
        }
        await manager.automaticLaunch?.value
        #expect(manager.launchState == .finished)
        #expect(manager.lastResult?.flags == [.alreadyAuthenticated])
        // The scene's loginIfRequired waited for the launch; its setupRootViewController() adds nothing.
        for _ in 0 ..< 3 { await Task.yield() }
        #expect(builds == ["005A"])
        let window = try #require(manager.window)
        #expect((window.rootController as? AccountsListController)?.user == "005A")
        #expect(window.isKeyWindow)
        let ada = FakeAccountManager.account("005A").identity
        #expect(manager.stores.soups(for: .user(ada)).map(\.name) == ["Account"])
        #expect(manager.stores.syncs(for: .user(ada)).map(\.name) == ["syncDownAccounts"])
        // Back from the background: the template shows its empty screen and builds the root again.
        try host.moveToBackground()
        try host.moveToForeground()
        #expect(window.rootController is PlaceholderController)
        for _ in 0 ..< 3 { await Task.yield() }
        #expect(builds == ["005A", "005A"])
        // A switch: the user-change block rebuilds, once.
        try accounts.switchTo(FakeAccountManager.account("005B").identity)
        #expect(builds == ["005A", "005A", "005B"])
        // A logout leaving users: the first becomes current, rebuilt once.
        await accounts.logout(FakeAccountManager.account("005B").identity, reason: .userInitiated)
        #expect(builds == ["005A", "005A", "005B", "005A"])
        #expect((window.rootController as? AccountsListController)?.user == "005A")
        try host.terminate()
    } }
}

/// The porting article's `AppResources.setUp` and its manifest.
@MainActor
struct PortingGuideResourcesTests {
    /// `setUp` on an environment whose data and config homes are temporary folders: the data home
    /// is `$XDG_DATA_HOME/MyApp` (0700), the master key `$XDG_CONFIG_HOME/MyApp/master.key` (0600,
    /// apart from the data), the users a `UserAccountManager` over a store in the data home. In a
    /// scope of its own: the process's `AppResources` are untouched.
    @Test func setUpUsesTheDataHomeAndAKeyFileApart() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("porting-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let environment = ["XDG_DATA_HOME": folder.appendingPathComponent("data").path,
                           "XDG_CONFIG_HOME": folder.appendingPathComponent("config").path, "HOME": folder.path]
        try inOwnScope {
            try AppResources.setUp(app: "MyApp", configDirectory: folder, environment: environment)
            #expect(AppResources.dataDirectory?.path == folder.appendingPathComponent("data/MyApp").path)
            #expect(AppResources.configDirectory == folder)
            #expect(AppResources.keyRing?.provider.keyFileURL?.path == folder.appendingPathComponent("config/MyApp/master.key").path)
            #expect(AppResources.accounts is UserAccountManager)
            let mode = try FileManager.default.attributesOfItem(atPath: folder.appendingPathComponent("data/MyApp").path)[.posixPermissions] as? Int
            #expect(mode == 0o700)
            #expect(FileManager.default.fileExists(atPath: folder.appendingPathComponent("config/MyApp/master.key").path))
        }
        #expect(AppResources.dataDirectory == nil, "the process's resources are untouched")
    }

    /// A data home another user could write to is refused, naming it; nothing is set.
    @Test func setUpRefusesADataHomeOthersCanWrite() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("porting-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("data/MyApp"), withIntermediateDirectories: true)
        try FileManager.default.setAttributes([.posixPermissions: 0o777], ofItemAtPath: folder.appendingPathComponent("data/MyApp").path)
        let environment = ["XDG_DATA_HOME": folder.appendingPathComponent("data").path,
                           "XDG_CONFIG_HOME": folder.appendingPathComponent("config").path]
        inOwnScope {
            let error = #expect(throws: DataHomeError.self) {
                try AppResources.setUp(app: "MyApp", configDirectory: folder, environment: environment)
            }
            #expect(error?.description.contains("MyApp") == true)
            #expect(AppResources.dataDirectory == nil && AppResources.keyRing == nil)
        }
    }

    /// The article's manifest. A test target cannot compile a manifest (PackageDescription is the
    /// package manager's), so this checks what can drift: every product it names is one of this
    /// package's libraries.
    @Test func manifestNamesProductsThisPackageHas() throws {
        let manifest = """
        import PackageDescription

        let package = Package(
            name: "MyApp",
            platforms: [.macOS(.v15)],
            dependencies: [
                .package(url: "https://example.com/AppKernel.git", branch: "main"),
            ],
            targets: [
                .executableTarget(name: "MyApp", dependencies: [
                    .product(name: "AppKernel", package: "AppKernel"),
                    .product(name: "AppKernelSDK", package: "AppKernel"),
                    .product(name: "AppKernelAuth", package: "AppKernel"),
                    .product(name: "AppKernelREST", package: "AppKernel"),
                    .product(name: "AppKernelStore", package: "AppKernel"),
                    .product(name: "AppKernelSync", package: "AppKernel"),
                    .product(name: "AppKernelPOSIX", package: "AppKernel"),
                ], resources: [.copy("Resources")]),
                .testTarget(name: "MyAppTests", dependencies: [
                    "MyApp",
                    .product(name: "AppKernelTesting", package: "AppKernel"),
                    .product(name: "AppKernelSDKTesting", package: "AppKernel"),
                    .product(name: "AppKernelEmbeddedOrg", package: "AppKernel"),
                ]),
            ]
        )
        """
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let ours = try String(contentsOf: root.appendingPathComponent("Package.swift"), encoding: .utf8)
        let named = productsNamed(inManifest: manifest)
        #expect(named.count == 10)
        #expect(productsNotLibraries(named, packageManifest: ours) == [], "not library products")
    }
}
