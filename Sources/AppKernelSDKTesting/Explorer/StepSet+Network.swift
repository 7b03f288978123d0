public import AppKernelTesting
import AppKernel
import AppKernelSDK

extension StepSet {
    /// The network's steps, for an ``OrgWorld``: the user taps refresh (`request`: the app's
    /// ``OrgWorld/requestAction``, sending through the current user's REST client), the oldest
    /// waiting request's page arrives (`syncPage(ok)`) or the server fails it (`syncPage(fail)`:
    /// 503), it is answered 401 and the client's token refresh succeeds (`401(refresh)`: the
    /// request is sent again and waits again) or is refused (`401(invalid_grant)`: the SDK logs
    /// the user out, reason `tokenExpired`), and the network goes down (`network(down)`: every
    /// request fails with a connection error) and comes back (`network(up)`).
    ///
    /// Each is enabled only when it can happen: `request` while the app runs with a current user
    /// and no launch phase runs (and fewer than two requests wait); `syncPage` and `401` while a
    /// request waits; `network(down)` while it is up and `network(up)` while it is down.
    public static var network: StepSet {
        @MainActor func orgWorld(_ world: ExplorerWorld) -> OrgWorld? { world as? OrgWorld }
        @MainActor func requireOrgWorld(_ world: ExplorerWorld, _ step: String, _ argument: String?) throws -> OrgWorld {
            guard let world = orgWorld(world) else { throw StepArgumentError(step: step, argument: argument ?? "", expected: "an OrgWorld") }
            return world
        }
        @MainActor func waits(_ world: ExplorerWorld) -> Bool { !(orgWorld(world)?.network.held.isEmpty ?? true) }
        return StepSet([
            StepDefinition("request", isEnabled: { world, _ in
                guard let world = orgWorld(world) else { return false }
                return world.isSettledApp && world.accounts.currentIdentity != nil && world.network.held.count < 2
            }, code: { _ in "world.startRequest()" }) { world, argument in
                try requireOrgWorld(world, "request", argument).startRequest()
            },
            StepDefinition("syncPage", arguments: ["ok", "fail"], isEnabled: { world, _ in waits(world) },
                           code: { $0 == "fail" ? "world.failPage()" : "world.deliverPage()" }) { world, argument in
                let world = try requireOrgWorld(world, "syncPage", argument)
                switch argument {
                case "ok": world.deliverPage()
                case "fail": world.failPage()
                default: throw StepArgumentError(step: "syncPage", argument: argument ?? "", expected: "ok or fail")
                }
            },
            StepDefinition("401", arguments: ["refresh", "invalid_grant"], isEnabled: { world, _ in waits(world) },
                           code: { "world.answerWith401(refreshRefused: \($0 == "invalid_grant"))" }) { world, argument in
                let world = try requireOrgWorld(world, "401", argument)
                switch argument {
                case "refresh": world.answerWith401(refreshRefused: false)
                case "invalid_grant": world.answerWith401(refreshRefused: true)
                default: throw StepArgumentError(step: "401", argument: argument ?? "", expected: "refresh or invalid_grant")
                }
            },
            StepDefinition("network", arguments: ["down", "up"], isEnabled: { world, argument in
                guard let world = orgWorld(world), world.application != nil else { return false }
                return world.network.isDown == (argument == "up")
            }, code: { "world.setNetwork(down: \($0 == "down"))" }) { world, argument in
                let world = try requireOrgWorld(world, "network", argument)
                switch argument {
                case "down": world.setNetwork(down: true)
                case "up": world.setNetwork(down: false)
                default: throw StepArgumentError(step: "network", argument: argument ?? "", expected: "down or up")
                }
            },
        ])
    }
}
