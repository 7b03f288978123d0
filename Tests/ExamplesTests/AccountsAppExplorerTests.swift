@testable import AccountsApp
import AppKernel
import AppKernelAuth
import AppKernelCore
import AppKernelSDK
import AppKernelTesting
import Foundation
import TestSupport
import Testing

/// AccountsApp's own app — its delegate, `AccountsSDKManager`, the embedded org, sealed data
/// home — under the lifecycle explorer (issue 32's "the explorer run over AccountsApp's world"):
/// every schedule on a fresh data home, removed when the schedule ends.
@MainActor
final class AccountsAppWorld: ExplorerWorld {
    let app: AccountsWorld
    private var lists: [AccountsListController] = []

    init(app: AccountsWorld, home: TemporaryDataHome) {
        self.app = app
        super.init(expression: "try AccountsAppWorld.make()") { _ in app.delegate }
        host.beforeEachLaunch { app.attach(to: $0) }
        let factory = app.manager.rootControllerFactory
        app.manager.rootControllerFactory = { [weak self] user in
            let root = factory?(user) ?? PlaceholderController(message: "none")
            if let list = root as? AccountsListController { self?.lists.append(list) }
            return root
        }
        onTearDown { withExtendedLifetime(home) {} }
    }

    static func make() throws -> AccountsAppWorld {
        Console.isMuted = true
        let home = try TemporaryDataHome()
        let dataHome = try DataHome.forApp("AccountsApp", environment: home.environment).url
        let provider = try KeyProvider.keyFile(application: "AccountsApp", environment: home.environment)
        return AccountsAppWorld(app: try AccountsWorld.make(dataHome: dataHome, keyProvider: provider, options: Options([])), home: home)
    }

    /// The SDK's launch and the list's load run on their own; the world is quiet once both ended.
    override var isQuiescent: Bool {
        super.isQuiescent && !app.manager.launchState.isRunning && lists.allSatisfy { $0.loadingFinished }
    }

    override func fingerprint() -> [String] {
        super.fingerprint() + ["launch \(app.manager.launchState) user \(app.manager.accountManager?.currentAccount?.identity.userID ?? "-")"]
    }

    /// The accounts list shows the current user's records, nobody else's.
    static let listShowsTheCurrentUser = ExplorerInvariant("listShowsTheCurrentUser") { world in
        guard let world = world as? AccountsAppWorld, world.application?.state.isRunning == true,
              let list = world.app.manager.window?.rootController as? AccountsListController else { return nil }
        let current = world.app.manager.accountManager?.currentAccount?.identity
        guard list.user?.identity != current else { return nil }
        return "the accounts list shows \(list.user?.identity.userID ?? "nobody")'s records while \(current?.userID ?? "nobody") is current"
    }
}

@MainActor
struct AccountsAppExplorerTests {
    /// Every ordering of the lifecycle events a Linux process delivers (its signals: TSTP, CONT,
    /// HUP, USR1, TERM), a relaunch, pushes and time, to depth 4: every invariant holds.
    @Test(.exploresManySchedules, .reportsProgress) func accountsAppHoldsEveryInvariantToDepthFour() async throws {
        let steps: StepSet = .system + .signals()
        let explorer = LifecycleExplorer(world: { try AccountsAppWorld.make() }, steps: steps,
                                         invariants: .standard + [AccountsAppWorld.listShowsTheCurrentUser])
        let report = try await explorer.check(depth: 4, budget: .seconds(240), walkDepth: 0)
        #expect(report.firstViolation == nil, "\(report)")
        #expect(report.refusedSteps == 0, "\(report.firstRefusedStep ?? "")")
        #expect(report.exhaustedDepth == 4)
        figure("AccountsApp's world:", report)
    }
}
