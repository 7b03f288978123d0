import AppKernel

extension SDKManager {
    /// The class ``shared`` is made from, and the instance once made.
    private static var registration = (type: SDKManager.Type?.none, instance: SDKManager?.none)

    /// Makes ``shared`` an instance of the calling class — the Mobile SDK's `initializeSDK()`.
    /// `MobileSyncSDKManager.initializeSDK()` on a subclass of a subclass works the same way.
    /// Calling it again with the same class does nothing.
    /// - Throws: ``SDKManagerError`` when ``shared`` already exists as an instance of another class.
    public class func initializeSDK() throws(SDKManagerError) {
        if registration.type == self { return }
        if let instance = registration.instance {
            throw SDKManagerError(registered: String(describing: type(of: instance)), requested: String(describing: self))
        }
        registration.type = self
    }

    /// The one manager of the process, an instance of the class that called ``initializeSDK()``
    /// (of `SDKManager` if none did), made on first use and kept for the process's lifetime.
    /// Tests build their own managers instead.
    public static var shared: SDKManager {
        if let instance = registration.instance { return instance }
        let instance = (registration.type ?? SDKManager.self).init()
        registration.instance = instance
        return instance
    }

    /// Forgets the shared manager and its class, so a test can exercise ``initializeSDK()``.
    @_spi(Testing)
    public static func resetSharedManagerForTesting() {
        registration = (nil, nil)
    }
}
