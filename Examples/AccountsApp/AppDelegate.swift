import AppKernelAuth
import AppKernel
import AppKernelSDK
import Foundation

/// The forceios template's `AppDelegate`: initialises the SDK (so `SDKManager.shared` is an
/// `AccountsSDKManager`) and hands scenes to `SceneDelegate`.
@MainActor
final class AppDelegate: ApplicationDelegate {
    init() {
        do { try AccountsSDKManager.initializeSDK() } catch { Console.say("SDK: \(error)") }
    }

    func application(_ application: Application, didFinishLaunchingWithOptions options: LaunchOptions) -> Bool {
        Console.say("app did finish launching")
        // A part the SDK starts in its sdkInit phase (the template's SmartStoreSDKManager opens
        // the global store): here, the global SmartStore under the app's data home.
        SDKManager.shared.registerService(named: "SmartStore") {
            guard let stores = SDKManager.shared.storeManager else { return }
            let store = try stores.store(named: SmartStore.defaultStoreName, for: .global)   // sealed with the global key
            Console.say("SmartStore ready: the global store has \(try store.allSoupNames().count) soup(s)")
        }
        return true
    }

    func application(_ application: Application, configurationForConnecting session: SceneSession,
                     options: SceneConnectionOptions) -> SceneConfiguration {
        SceneConfiguration(name: "Default Configuration") { SceneDelegate() }
    }

    func applicationWillTerminate(_ application: Application) { Console.say("app will terminate") }
    func applicationDidReceiveMemoryWarning(_ application: Application) { Console.say("memory warning (SIGUSR1 or memory pressure)") }
}

/// The template's `SceneDelegate`: makes the window, lets the SDK manager put its placeholder
/// and then the root controller in it, and resets the view when the current user changes.
@MainActor
final class SceneDelegate: AppKernel.SceneDelegate {
    var window: Window?

    func scene(_ scene: Scene, willConnectTo session: SceneSession, options: SceneConnectionOptions) {
        let window = Window(windowScene: scene)
        self.window = window
        SDKManager.shared.window = window
        window.makeKeyAndVisible()
        SDKManager.shared.registerBlock(forCurrentUserChangeNotifications: {
            let user = SDKManager.shared.accountManager?.currentAccount
            Console.say("current user changed: \(user?.userIdentity?.username ?? "nobody")")
        })
        Console.say("scene connected (\(session.persistentIdentifier))")
    }

    func sceneDidBecomeActive(_ scene: Scene) { Console.say("scene became active") }
    func sceneWillResignActive(_ scene: Scene) { Console.say("scene will resign active") }
    func sceneDidEnterBackground(_ scene: Scene) { Console.say("scene entered the background") }
    func sceneWillEnterForeground(_ scene: Scene) { Console.say("scene will enter the foreground") }
}
