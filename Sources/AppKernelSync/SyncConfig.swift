public import AppKernelCore
import AppKernelStore
public import Foundation

/// `usersyncs.json` in the Mobile SDK's format: every key the Mobile SDK reads (iOS and Android),
/// with the iOS SDK's rules.
///
/// ```swift
/// let config = try SyncConfig.load(json: #"{"syncs": [{"syncName": "accounts", "syncType": "syncDown", "soupName": "Account", "target": {"type": "soql", "query": "SELECT Id, Name FROM Account"}}]}"#)
/// config.warnings.map(\.keyPath)   // ["syncs[0].options"]: no options, OVERWRITE applies
/// ```
///
/// What the iOS SDK fails on — a sync-down target it cannot make (no type, an unknown type, a
/// `custom` one naming no class), a sync-up `type` other than `rest` with no `iOSImpl`, a missing
/// sync name or soup — is a `ConfigError` naming the file, line and key path. What it accepts
/// with a default loads with that default and a ``warnings`` entry: no `options` (or empty ones)
/// or no `mergeMode` (OVERWRITE), a `parent_children` target without `parentSoqlFilter` (no
/// filter), `parentFieldlist` / `childrenFieldlist` (none) or `relationshipType` (LOOKUP), a
/// sync up without `target` (sObject collections), an `androidImpl` naming another SDK class than
/// `iOSImpl` (the `iOSImpl` runs). Two deliberate refusals the SDK lacks: an unknown key (a
/// misspelt key would be lost in silence) and a value outside an enumeration (`"mergeMode":
/// "LEAVE_IF_CHANGE"` would read as OVERWRITE on iOS and overwrite local changes).
///
/// A target whose `iOSImpl` names an app class (not one of the SDK's) is a custom target: its
/// keys stay in ``SyncTargetDetails/customProperties`` for the app's type, registered by that
/// class name in a ``SyncTargetRegistry``. Given a registry, ``load(_:soupNames:targets:file:)``
/// refuses a class it does not name; without one, the run does (``SyncError/Code/unsupportedTarget``).
/// The soups the syncs fill come from `userstore.json` (`StoreConfig.parseSoups(_:file:)`).
public struct SyncConfig: Sendable, Hashable {
    /// The default syncs file's name.
    public static let syncsFileName = "usersyncs.json"

    /// The syncs, in the file's order.
    public var syncs: [SyncSpec]
    /// What the file lacks or says that the SDK accepts with a default, with its key path.
    public var warnings: [ConfigWarning]

    /// A configuration of these syncs.
    public init(syncs: [SyncSpec], warnings: [ConfigWarning] = []) {
        self.syncs = syncs
        self.warnings = warnings
    }

    /// Reads `{"syncs": [{"syncName", "syncType", "soupName", "target", "options"}]}`.
    /// - Parameters:
    ///   - data: The file's contents.
    ///   - soupNames: The soups that exist (a sync naming another is an error); `nil`: not
    ///     checked here (creating the sync checks its soups).
    ///   - targets: The app's custom targets; given, a custom target it does not name is an error.
    ///   - file: The name errors and warnings give the file.
    /// - Throws: `ConfigError` naming the file, line and key path (see the type's discussion).
    public static func load(_ data: Data, soupNames: Set<String>? = nil, targets: SyncTargetRegistry? = nil,
                            file: String = syncsFileName) throws(ConfigError) -> SyncConfig {
        var reader = SyncConfigReader(soupNames: soupNames, targets: targets)
        let syncs = try reader.read(ConfigParser.parseJSON(data, file: file))
        return SyncConfig(syncs: syncs, warnings: reader.warnings)
    }

    /// ``load(_:soupNames:targets:file:)`` from the file's text.
    public static func load(json: String, soupNames: Set<String>? = nil, targets: SyncTargetRegistry? = nil,
                            file: String = syncsFileName) throws(ConfigError) -> SyncConfig {
        try load(Data(json.utf8), soupNames: soupNames, targets: targets, file: file)
    }

    /// The syncs of ``load(_:soupNames:targets:file:)`` (its warnings dropped), every sync's soup
    /// checked against `soupNames`.
    /// - Throws: `ConfigError`, as ``load(_:soupNames:targets:file:)``.
    public static func parseSyncs(_ data: Data, soupNames: Set<String>, file: String = syncsFileName) throws(ConfigError) -> [SyncSpec] {
        try load(data, soupNames: soupNames, file: file).syncs
    }
}
