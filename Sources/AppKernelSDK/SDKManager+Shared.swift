import AppKernel
import AppKernelCore

extension SDKManager {
    /// The shared instance once made, and its observation of the process's launches.
    private static var registration = (instance: SDKManager?.none, launches: ListenerToken?.none)

    /// Makes ``shared`` — at once — an instance of the calling class: the Mobile SDK's
    /// `initializeSDK()`, which the template's app delegate calls in its `init`.
    /// `MobileSyncSDKManager.initializeSDK()` on a subclass of a subclass works the same way.
    /// Calling it again with the same class does nothing.
    ///
    /// From then on the shared manager attaches itself to the application that launches (the
    /// first one, and after it terminates the next): it starts its launch when the app finishes
    /// launching, with no wiring, as the Mobile SDK observes `UIApplication` by itself.
    /// - Throws: ``SDKManagerError`` when ``shared`` already exists as an instance of another class.
    public class func initializeSDK() throws(SDKManagerError) {
        if let instance = registration.instance {
            guard type(of: instance) == self else {
                throw SDKManagerError(registered: String(describing: type(of: instance)), requested: String(describing: self))
            }
            return
        }
        makeShared(self)
    }

    /// The one manager of the process: an instance of the class that called ``initializeSDK()``
    /// (of `SDKManager` if none did, made on first use), kept for the process's lifetime.
    /// Tests usually build their own managers instead.
    public static var shared: SDKManager {
        SharedManagerScope.current?.manager ?? registration.instance ?? makeShared(SDKManager.self)
    }

    @discardableResult
    private static func makeShared(_ type: SDKManager.Type) -> SDKManager {
        let instance = type.init()
        let launches = Application.observeLaunches { [weak instance] application in instance?.adopt(application) }
        registration = (instance, launches)
        return instance
    }

    /// Attaches the shared manager to `application`, which starts launching, unless it serves
    /// another application that still runs.
    private func adopt(_ application: Application) {
        guard self.application !== application else { return }
        if let current = self.application, current.state != .terminated { return }
        attach(to: application)
    }

    /// Forgets the shared manager (which stops observing the process's launches), so a test can
    /// exercise ``initializeSDK()``.
    @_spi(Testing)
    public static func resetSharedManagerForTesting() {
        registration.launches?.cancel()
        registration.instance?.stop()
        registration = (nil, nil)
    }
}

/// A manager that stands for ``SDKManager/shared`` in one task and its child tasks: what lets a
/// test that goes through `shared` (``KeyValueEncryptedStore/forCurrentUser(named:)``, …) run in
/// parallel with others, each with its own manager.
@_spi(Testing)
public final class SharedManagerScope: Sendable {
    /// The scope of the running task, if any.
    @TaskLocal public static var current: SharedManagerScope?
    private let slot = Locked<SDKManager?>(nil)
    /// The manager ``SDKManager/shared`` answers with in this scope (`nil`: the process's).
    public var manager: SDKManager? {
        get { slot.withLock { $0 } }
        set { slot.withLock { $0 = newValue } }
    }
    /// An empty scope.
    public init() {}
}
