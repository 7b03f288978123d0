#if compiler(>=6.1) && canImport(Testing)
public import AppKernel
public import AppKernelSDK
public import AppKernelTesting
public import Testing

extension Trait where Self == AppKernelTrait {
    /// The `appKernel` trait with the app's SDK manager: inside the test's scope it calls
    /// `manager.initializeSDK()` — so `SDKManager.shared` is an instance of `manager`, the test's
    /// own, as the ported template's delegates expect — and attaches it to the test's host.
    ///
    /// ```swift
    /// @Test(.appKernel(manager: AppSDKManager.self)) @MainActor
    /// func launchesToTheAccountsList() async throws {
    ///     let host = AppKernelTest.current.host
    ///     try host.launch(delegate: AppDelegate())
    ///     try await host.launchFinished()            // the SDK's launch phases ran
    ///     #expect(SDKManager.shared is AppSDKManager)
    ///     _ = host.trace.take()
    /// }
    /// ```
    ///
    /// The end-of-test checks also count the manager's launch phases still running (its
    /// automatic launch, a re-authentication, an unlock) as running tasks, and its launch failures
    /// nobody heard (no `launchErrorHandler`) as unhandled errors; a failed test gets the
    /// manager's launch timeline attached. The manager stops when the test ends.
    /// - Parameters:
    ///   - manager: The app's subclass of `SDKManager` (or `SDKManager` itself).
    ///   - configuration: The configuration the host's applications get.
    ///   - traceOptions: What the host's trace records.
    public static func appKernel(manager: SDKManager.Type, configuration: ApplicationConfiguration = ApplicationConfiguration(),
                                 traceOptions: TraceRecorder.Options = [.delegates, .system, .hookStops]) -> AppKernelTrait {
        AppKernelTrait(configuration: configuration, traceOptions: traceOptions) { test in
            try test.initializeSDK(manager)
        }
    }
}

extension AppKernelTest {
    /// Calls `manager.initializeSDK()` in this test's scope and ties `SDKManager.shared` to the
    /// test: attached to its host before every launch, its running launch phases and launch
    /// timeline reported at the end, stopped when the test ends. The `appKernel(manager:)` trait
    /// calls it before the test body.
    /// - Throws: `SDKManagerError` when the scope's shared manager is already of another class.
    public func initializeSDK(_ manager: SDKManager.Type) throws(SDKManagerError) {
        try manager.initializeSDK()
        let shared = SDKManager.shared
        host.attach(shared)
        addRunningWork {
            guard case .running(let phase) = shared.launchState else { return [] }
            return ["the SDK manager's launch phases, at '\(phase)' (its automatic launch, a re-authentication or an unlock)"]
        }
        addTimeline {
            ["SDK manager (\(type(of: shared))), launch \(shared.launchState):"]
                + shared.launchEngine.timeline.map { "  \($0.name): \($0.start) → \($0.end.map { "\($0)" } ?? "not ended")" }
        }
        onFinish { shared.stop() }
    }
}
#endif
