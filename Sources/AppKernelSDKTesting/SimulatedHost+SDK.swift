import AppKernel
public import AppKernelSDK
public import AppKernelTesting

extension SimulatedHost {
    /// Attaches `manager` to every application this host launches from now on, before its
    /// launch — as an app delegate's `init` calling `initializeSDK()` attaches the shared manager
    /// to the real app, and as `ProcessHost` allows right after it is made: the manager hears
    /// `didFinishLaunching` and starts its launch by itself.
    ///
    /// ```swift
    /// let host = SimulatedHost()
    /// host.attach(manager)
    /// let app = try host.launch(delegate: AppDelegate())
    /// await manager.automaticLaunch?.value
    /// ```
    public func attach(_ manager: SDKManager) {
        beforeEachLaunch { [weak manager] application in manager?.attach(to: application) }
    }

    /// The SDK launch failures that reached this host unhandled — those of an attached manager
    /// with no `launchErrorHandler` (or refused by single-instance mode), oldest first: what a
    /// `ProcessHost` would log before ending the process. The whole reports are in
    /// `unhandledErrors`.
    ///
    /// ```swift
    /// host.attach(manager)                       // no launchErrorHandler
    /// try host.launch(delegate: AppDelegate())
    /// await manager.automaticLaunch?.value
    /// #expect(host.unhandledLaunchErrors.map(\.phase) == [.config])
    /// ```
    public var unhandledLaunchErrors: [LaunchError] { unhandledErrors.compactMap { $0.error as? LaunchError } }
}
