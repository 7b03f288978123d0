public import AppKernel

extension SimulatedHost {
    /// Waits until the current application's launch is done — its launch gates (an attached SDK
    /// manager's launch phases register one) and its BootLoader's async phases — and throws the
    /// first failure of it that nothing in the app heard.
    ///
    /// ```swift
    /// try host.launch(delegate: AppDelegate())
    /// try await host.launchFinished()            // the SDK's launch ran; throws its LaunchError
    /// ```
    ///
    /// A failure it throws counts as heard: the `appKernel` trait's exhaustive check does not
    /// report it again. A failure a handler took (`SDKManager.launchErrorHandler`,
    /// `Application.hookErrorHandler`) is not thrown. A phase that sleeps on a ``TestClock``
    /// waits until the test advances the clock (from another task).
    /// - Parameter maxYields: How many times to yield the main actor for the BootLoader's async
    ///   phases to end, after the launch gates opened.
    /// - Throws: The first unheard failure of the launch: the error an unhandled report carries
    ///   (an SDK launch's `LaunchError`), or the `HookError` of a failed BootLoader phase no
    ///   `hookErrorHandler` received; ``LaunchNotFinishedError`` when the BootLoader still runs
    ///   after `maxYields`; `ApplicationError` (`notLaunched`) before the first launch.
    public func launchFinished(maxYields: Int = 10_000) async throws {
        guard let application else { throw ApplicationError(code: .notLaunched, event: "launchFinished", state: .notRunning) }
        await application.waitForLaunchGates()
        var yields = 0
        while application.bootLoader.state.isRunning, yields < maxYields {
            await Task.yield()
            yields += 1
        }
        if case .running(let phase) = application.bootLoader.state {
            throw LaunchNotFinishedError(phase: phase.name, yields: yields)
        }
        if let index = unhandledErrors.indices.first(where: { !heardUnhandledErrors.contains($0) }) {
            heardUnhandledErrors.insert(index)
            throw unhandledErrors[index].error
        }
        if application.bootLoader.state.failedPhase != nil, let hookError = takeHookErrors().first {
            throw hookError
        }
    }

    /// Returns the ``unhandledErrors`` no test has heard yet and marks them heard, so the
    /// `appKernel` trait's exhaustive check does not report them.
    ///
    /// ```swift
    /// try host.launch(delegate: AppDelegate())        // the SDK's config phase fails, no handler
    /// try? await host.launchFinished()
    /// #expect(host.takeUnhandledErrors().isEmpty)     // launchFinished threw (and heard) it
    /// ```
    @discardableResult
    public func takeUnhandledErrors() -> [UnhandledError] {
        let unheard = unheardUnhandledErrors
        heardUnhandledErrors.formUnion(unhandledErrors.indices)
        return unheard
    }

    /// The ``unhandledErrors`` no test has heard (taken with ``takeUnhandledErrors()`` or thrown
    /// by ``launchFinished(maxYields:)``), oldest first.
    public var unheardUnhandledErrors: [UnhandledError] {
        unhandledErrors.indices.filter { !heardUnhandledErrors.contains($0) }.map { unhandledErrors[$0] }
    }

    /// Returns the current application's hook and BootLoader-phase failures (`hookErrors`) not
    /// taken before, and marks them taken, so the `appKernel` trait's exhaustive check does not
    /// report them — the way to assert a failure an app with no `hookErrorHandler` had.
    @discardableResult
    public func takeHookErrors() -> [HookError] {
        guard let application else { return [] }
        let key = ObjectIdentifier(application)
        let taken = min(takenHookErrors[key] ?? 0, application.hookErrors.count)
        takenHookErrors[key] = application.hookErrors.count
        return Array(application.hookErrors[taken...])
    }

    /// The hook failures of every living application this host launched that no
    /// `hookErrorHandler` received and no test took, oldest application first.
    public var unheardHookErrors: [HookError] {
        launchedApplications.compactMap(\.application).flatMap { application -> [HookError] in
            guard application.hookErrorHandler == nil else { return [] }
            let taken = min(takenHookErrors[ObjectIdentifier(application)] ?? 0, application.hookErrors.count)
            return Array(application.hookErrors[taken...])
        }
    }

    /// The living applications this host launched, oldest first.
    var launchedAndAlive: [Application] { launchedApplications.compactMap(\.application) }
}

/// ``SimulatedHost/launchFinished(maxYields:)`` gave up: a BootLoader phase still runs.
public struct LaunchNotFinishedError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The BootLoader phase still running.
    public var phase: String
    /// How many times the main actor was yielded for it.
    public var yields: Int

    /// What is wrong and how to fix the test.
    public var description: String {
        "the BootLoader phase '\(phase)' still runs after \(yields) yields of the main actor: it waits on something the test must do — advance the test clock from another task (it sleeps), or answer what it awaits."
    }
}
