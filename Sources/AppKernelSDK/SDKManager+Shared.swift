import AppKernel
import AppKernelCore
import Foundation

extension SDKManager {
    /// The shared instance of one scope (or of the process), once made, and its observation of
    /// the launches there.
    @MainActor
    final class SharedRegistration {
        var instance: SDKManager?
        var launches: ListenerToken?

        /// Stops observing launches and stops the instance (its scope finished).
        func stop() {
            launches?.cancel()
            launches = nil
            instance?.stop()
            instance = nil
        }
    }

    /// The process's shared manager (outside any `SharedScope`).
    private static let processRegistration = SharedRegistration()
    /// A scope's shared manager.
    private static let registrationKey = SharedScope.Key<SharedRegistration>("SDKManager.shared")

    /// The registration of the current `SharedScope` (made there on first use, stopped when the
    /// scope finishes), or the process's outside any scope.
    private static var registration: SharedRegistration {
        SharedScope.resolve(registrationKey, make: {
            let registration = SharedRegistration()
            SharedScope.current?.onFinish { onMainActor { registration.stop() } }
            return registration
        }, process: { processRegistration })
    }

    /// Makes ``shared`` — at once — an instance of the calling class: the Mobile SDK's
    /// `initializeSDK()`, which the template's app delegate calls in its `init`.
    /// `MobileSyncSDKManager.initializeSDK()` on a subclass of a subclass works the same way.
    /// Calling it again with the same class does nothing.
    ///
    /// From then on the shared manager attaches itself to the application that launches (the
    /// first one, and after it terminates the next): it starts its launch when the app finishes
    /// launching, with no wiring, as the Mobile SDK observes `UIApplication` by itself.
    ///
    /// Inside a `SharedScope` (a test's), all of this happens in the scope: ``shared`` there is
    /// the scope's own instance of the calling class, it attaches to the first application
    /// launched in the scope, and it stops when the scope finishes. Tests of an app whose
    /// delegates read `SDKManager.shared` run in parallel, each in its own scope.
    /// - Throws: ``SDKManagerError`` when ``shared`` already exists as an instance of another class.
    public class func initializeSDK() throws(SDKManagerError) {
        let registration = registration
        if let instance = registration.instance {
            guard type(of: instance) == self else {
                throw SDKManagerError(registered: String(describing: type(of: instance)), requested: String(describing: self))
            }
            return
        }
        install(self.init(), in: registration)
    }

    /// The one manager of the process — or, inside a `SharedScope`, of the scope: an instance of
    /// the class that called ``initializeSDK()`` there (of `SDKManager` if none did, made on first
    /// use), kept for the process's (the scope's) lifetime.
    public static var shared: SDKManager {
        let registration = registration
        return registration.instance ?? install(SDKManager(), in: registration)
    }

    /// Makes this manager ``shared`` in the current `SharedScope` (or the process, outside any)
    /// — a test that builds and attaches its own manager and reaches it through code that reads
    /// `SDKManager.shared` (`KeyValueEncryptedStore.forCurrentUser(named:)`, a delegate). Unlike
    /// ``initializeSDK()``'s instance it does not adopt applications that launch: it serves the
    /// one it is attached to. A previous shared manager there is replaced — as a relaunched
    /// process replaces the one that ended: it stops observing launches but is not stopped (it
    /// may still serve its application).
    public func makeShared() {
        let registration = Self.registration
        guard registration.instance !== self else { return }
        registration.launches?.cancel()
        registration.launches = nil
        registration.instance = self
    }

    @discardableResult
    private static func install(_ instance: SDKManager, in registration: SharedRegistration) -> SDKManager {
        registration.instance = instance
        registration.launches = Application.observeLaunches { [weak instance] application in instance?.adopt(application) }
        return instance
    }

    /// Attaches the shared manager to `application`, which starts launching, unless it serves
    /// another application that still runs.
    private func adopt(_ application: Application) {
        guard self.application !== application else { return }
        if let current = self.application, current.state != .terminated { return }
        attach(to: application)
    }
}

/// Runs `body` on the main actor: at once when called there (a scope finished by a main-actor
/// test), else in a main-actor task.
private func onMainActor(_ body: @escaping @MainActor @Sendable () -> Void) {
    if Thread.isMainThread {
        MainActor.assumeIsolated { body() }
    } else {
        Task { @MainActor in body() }
    }
}
