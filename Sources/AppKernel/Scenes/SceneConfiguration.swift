/// How to build a scene: its name, role and the factory for its delegate — UIKit's
/// `UISceneConfiguration` (where the delegate is named by class; here a closure builds it, since
/// Linux has no Objective-C runtime to instantiate a class by name).
///
/// ```swift
/// func application(_ application: Application, configurationForConnecting session: SceneSession,
///                  options: SceneConnectionOptions) -> SceneConfiguration {
///     SceneConfiguration(name: "Default") { SceneDelegate() }
/// }
/// ```
public struct SceneConfiguration: Sendable {
    /// The configuration's name (`"Default Configuration"` in Xcode's templates).
    public var name: String?
    /// The role of the sessions this configuration serves.
    public var sessionRole: SceneSessionRole
    /// Builds the scene's delegate; `nil` makes a scene without a delegate, as UIKit allows.
    public var delegateFactory: (@MainActor @Sendable () -> any SceneDelegate)?

    /// Creates a configuration.
    /// - Parameters:
    ///   - name: The configuration's name.
    ///   - sessionRole: The role of the sessions it serves.
    ///   - delegateFactory: Builds the scene's delegate when a scene is connected.
    public init(name: String?, sessionRole: SceneSessionRole = .windowApplication,
                delegateFactory: (@MainActor @Sendable () -> any SceneDelegate)? = nil) {
        self.name = name
        self.sessionRole = sessionRole
        self.delegateFactory = delegateFactory
    }
}
