public import AppKernelCore

/// The app's custom sync targets by class name — what `usersyncs.json`'s `iOSImpl` names, since
/// Linux has no Objective-C runtime to look a class up by name (as `ModuleClassRegistry` does for
/// mPaaS's classes).
///
/// ```swift
/// var targets = SyncTargetRegistry()
/// targets.registerSyncDown("RecentAccountsTarget") { RecentAccountsTarget(dict: $0) }
/// syncManager.targets = targets
/// ```
///
/// Each factory gets the target's JSON object (every key, its own ones included).
public struct SyncTargetRegistry: Sendable {
    /// Makes a sync-down target from its JSON object.
    public typealias SyncDownFactory = @Sendable ([String: JSONValue]) throws -> any CustomSyncDownTarget
    /// Makes a sync-up target from its JSON object.
    public typealias SyncUpFactory = @Sendable ([String: JSONValue]) throws -> any CustomSyncUpTarget

    private var syncDown: [String: SyncDownFactory]
    private var syncUp: [String: SyncUpFactory]

    /// A registry of these factories.
    public init(syncDown: [String: SyncDownFactory] = [:], syncUp: [String: SyncUpFactory] = [:]) {
        self.syncDown = syncDown
        self.syncUp = syncUp
    }

    /// Names the factory of a sync-down target class (replacing one of the same name).
    public mutating func registerSyncDown(_ className: String, factory: @escaping SyncDownFactory) {
        syncDown[className] = factory
    }

    /// Names the factory of a sync-up target class (plain or ``AdvancedSyncUpTarget``).
    public mutating func registerSyncUp(_ className: String, factory: @escaping SyncUpFactory) {
        syncUp[className] = factory
    }

    /// The sync-down class names registered.
    public var syncDownClassNames: Set<String> { Set(syncDown.keys) }
    /// The sync-up class names registered.
    public var syncUpClassNames: Set<String> { Set(syncUp.keys) }

    /// The sync-down target `details` name, made from its JSON.
    /// - Throws: ``SyncError`` `unsupportedTarget` naming the class and the fix when none is
    ///   registered; `customTargetFailed` when the factory throws.
    func makeSyncDown(_ details: SyncTargetDetails, json: [String: JSONValue], sync: String) throws(SyncError) -> any CustomSyncDownTarget {
        let name = details.iOSImpl ?? ""
        guard let factory = syncDown[name] else { throw Self.unregistered(name, register: "registerSyncDown", sync: sync) }
        do { return try factory(json) } catch { throw SyncError.custom(error, sync: sync, doing: "making the target \(name)") }
    }

    /// The sync-up target `details` name, made from its JSON.
    /// - Throws: as ``makeSyncDown(_:json:sync:)``.
    func makeSyncUp(_ details: SyncTargetDetails, json: [String: JSONValue], sync: String) throws(SyncError) -> any CustomSyncUpTarget {
        let name = details.iOSImpl ?? details.androidImpl ?? ""
        guard let factory = syncUp[name] else { throw Self.unregistered(name, register: "registerSyncUp", sync: sync) }
        do { return try factory(json) } catch { throw SyncError.custom(error, sync: sync, doing: "making the target \(name)") }
    }

    private static func unregistered(_ name: String, register: String, sync: String) -> SyncError {
        SyncError(code: .unsupportedTarget,
                  reason: "no target class '\(name)' is registered: register it before running the sync "
                      + "(syncManager.targets.\(register)(\"\(name)\") { \(name)(dict: $0) })",
                  sync: sync)
    }
}
