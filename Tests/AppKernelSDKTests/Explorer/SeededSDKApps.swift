import AppKernel
import AppKernelAuth
import AppKernelSDK
import AppKernelSDKTesting
import AppKernelTesting

// Deliberately wrong SDK apps for the lifecycle explorer (issue 32's "seeded bugs"), each with
// its fix. Users are 005A (current) and 005B.

/// The ids of `count` signed-in users: 005A, 005B, …
@MainActor
func explorerUsers(_ count: Int) -> [String] { (0..<count).map { "005" + String(UnicodeScalar(UInt8(65 + $0))) } }

/// The passcode lockout as this project once had it: after the last wrong answer it forgot the
/// passcode and logged out the *current* user only — so the SDK made the next user current and
/// the launch went on to show her data, no passcode asked. (The Mobile SDK logs every user out
/// after too many wrong passcodes; `SDKManager` now logs the others out first, then the current.)
final class OldLockoutManager: SDKManager {
    override func verifyPasscode() async throws {
        guard passcode.isSet else { return }
        while true {
            guard let entered = await passcodeProvider?.passcode(attempt: passcode.failedAttempts + 1, remaining: passcode.remainingAttempts) else {
                throw CancellationError()
            }
            guard passcode.unlock(with: entered) == .wrong else { return }
            guard passcode.hasExhaustedAttempts else { continue }
            passcode.reset()
            if let current = accountManager?.currentAccount {
                await accountManager?.logout(current.identity, reason: .passcodeFailures)
            }
            return
        }
    }
}

/// The SDK's own lockout, untouched.
final class FixedLockoutManager: SDKManager {}

/// A passcode-protected app with the old lockout (3 attempts, passcode 1111).
@MainActor
enum LockoutSwitchesUserApp {
    static func makeWorld(users: Int) throws -> SDKWorld {
        try SDKWorld(expression: "try LockoutSwitchesUserApp.makeWorld(users: \(users))", manager: OldLockoutManager.self,
                     users: explorerUsers(users), passcode: "1111", maximumAttempts: 3) { _ in EmptyAppDelegate() }
    }
}

/// The same app on the SDK's lockout.
@MainActor
enum FixedLockoutApp {
    static func makeWorld(users: Int) throws -> SDKWorld {
        try SDKWorld(expression: "try FixedLockoutApp.makeWorld(users: \(users))", manager: FixedLockoutManager.self,
                     users: explorerUsers(users), passcode: "1111", maximumAttempts: 3) { _ in EmptyAppDelegate() }
    }
}

/// An app delegate with nothing to do: the SDK manager does the work.
final class EmptyAppDelegate: ApplicationDelegate {}

/// Shows "recent records" in a side panel it refreshes on every user change. The bug: it loads
/// them for `change.from` — the previous user's store — so after a switch the panel shows the
/// other user's records. The fix loads `change.to`'s.
@MainActor
enum RecentRecordsApp {
    final class Delegate: ApplicationDelegate {
        let world: SDKWorld
        let readsPrevious: Bool
        var panelOwner: UserAccountIdentity?
        var observation: ListenerToken?
        init(world: SDKWorld, readsPrevious: Bool) {
            self.world = world
            self.readsPrevious = readsPrevious
        }

        func application(_ application: Application, didFinishLaunchingWithOptions options: LaunchOptions) -> Bool {
            observation = SDKManager.shared.addCurrentUserChangeObserver { [weak self] change in
                guard let self else { return }
                self.panelOwner = self.readsPrevious ? change.from : change.to
            }
            world.screenShows = { [weak self] in self?.panelOwner.map { [$0] } ?? [] }
            return true
        }
    }

    static func makeWorld(readsPrevious: Bool) throws -> SDKWorld {
        try SDKWorld(expression: "try RecentRecordsApp.makeWorld(readsPrevious: \(readsPrevious))", users: explorerUsers(2)) { world in
            Delegate(world: world as! SDKWorld, readsPrevious: readsPrevious)
        }
    }
}

/// Shows the current user's records as soon as it launches. The bug: it fills its screen in
/// `didFinishLaunching`, before the SDK's passcode phase — the records show behind the passcode
/// prompt to whoever holds the device. The fix shows them from the root controller the SDK builds
/// after the passcode phase.
@MainActor
enum EagerRecordsApp {
    final class Delegate: ApplicationDelegate {
        let world: SDKWorld
        let showsAtLaunch: Bool
        init(world: SDKWorld, showsAtLaunch: Bool) {
            self.world = world
            self.showsAtLaunch = showsAtLaunch
        }

        func application(_ application: Application, didFinishLaunchingWithOptions options: LaunchOptions) -> Bool {
            if showsAtLaunch {
                let shown = world.accounts.currentIdentity
                world.screenShows = { shown.map { [$0] } ?? [] }
            }
            return true
        }
    }

    static func makeWorld(showsAtLaunch: Bool) throws -> SDKWorld {
        try SDKWorld(expression: "try EagerRecordsApp.makeWorld(showsAtLaunch: \(showsAtLaunch))", users: explorerUsers(2),
                     passcode: "1111") { world in
            Delegate(world: world as! SDKWorld, showsAtLaunch: showsAtLaunch)
        }
    }
}
