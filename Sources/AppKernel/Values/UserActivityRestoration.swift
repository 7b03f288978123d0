/// What the app handed the restoration handler of a continued user activity — UIKit's
/// `restorationHandler` of `application(_:continue:restorationHandler:)`, seen from the system.
///
/// On iOS the system calls `restoreUserActivityState(_:)` on each object the app hands back.
/// AppKernel's restorable objects are the app's ``RootController``s, and a headless host has no
/// views to restore: the objects are kept here for the host (`SimulatedHost` returns them).
/// Calling the handler is optional; it counts once — a second call is ignored and reported in
/// ``Application/diagnostics`` (`restorationHandlerCalledTwice`).
///
/// ```swift
/// let restoration = UserActivityRestoration()
/// try app.handle(.continueUserActivity(activity, scene: nil, restoration: restoration))
/// let controllers = restoration.restorableObjects ?? []
/// ```
@MainActor
public final class UserActivityRestoration {
    /// The objects the app handed back, once it called the handler; `nil` before.
    public private(set) var restorableObjects: [any RootController]?
    /// How many times the handler was called after the first (each ignored).
    public private(set) var ignoredCalls = 0
    /// The application that reports a second call; set when the activity is delivered.
    weak var application: Application?
    /// The activity's type, as a second call's diagnostic names it.
    var activityType = "continueUserActivity"

    /// Creates an empty record, for a host to pass with the event.
    public init() {}

    /// Whether the app called the handler.
    public var isCalled: Bool { restorableObjects != nil }

    /// The handler the app receives: keeps the objects on the first call, ignores later ones.
    public var handler: @MainActor @Sendable ([any RootController]) -> Void {
        { [self] objects in self.restore(objects) }
    }

    private func restore(_ objects: [any RootController]) {
        guard restorableObjects == nil else {
            ignoredCalls += 1
            application?.report(.restorationHandlerCalledTwice, subject: "continueUserActivity(\(activityType))",
                                "the restoration handler was called again with \(objects.count) object(s); the first call's \(restorableObjects?.count ?? 0) object(s) stand and this call was ignored. Call it once, with every object that continues the activity.")
            return
        }
        restorableObjects = objects
    }
}
