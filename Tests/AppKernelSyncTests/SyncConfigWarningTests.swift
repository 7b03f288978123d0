import AppKernelCore
import AppKernelSync
import Foundation
import Testing

/// `usersyncs.json` read with the iOS SDK's rules (issue 33): what iOS accepts loads with its
/// default and a warning at the key path; what it fails on is refused. Each case names the iOS
/// source (SalesforceMobileSDK-iOS, libs/MobileSync/MobileSync/Classes) that decided it.
struct SyncConfigWarningTests {
    static let mru = #""target": {"type": "mru", "sobjectType": "Account", "fieldlist": ["Id"]}"#
    static let options = #""options": {"mergeMode": "OVERWRITE"}"#
    static let family = #""parent": {"sobjectType": "Account", "soupName": "accounts"}, "children": {"sobjectType": "Contact", "soupName": "contacts", "sobjectTypePlural": "Contacts", "parentIdFieldName": "AccountId"}"#

    static func file(_ sync: String) -> String { #"{"syncs": [\#(sync)]}"# }

    @Test(arguments: [
        // Util/SFSyncOptions.m newFromDict: no (or empty) options are none. Creating such a sync
        // fails on iOS (Config/SFSDKSyncsConfig.m hands nil to SFSyncState's dictionary literal);
        // a stored state without options reads as OVERWRITE (SFSyncState.m fromDict), which
        // AppKernel applies — a deliberate difference (DESIGN, "config files"; issue 33's test).
        (#"{"syncName": "s", "syncType": "syncDown", "soupName": "accounts", \#(mru)}"#, ["syncs[0].options"]),
        (#"{"syncName": "s", "syncType": "syncDown", "soupName": "accounts", \#(mru), "options": {}}"#, ["syncs[0].options"]),
        // Util/SFSyncState.m mergeModeFromString: no mergeMode is OVERWRITE.
        (#"{"syncName": "s", "syncType": "syncUp", "soupName": "accounts", "target": {}, "options": {"fieldlist": ["Name"]}}"#, ["syncs[0].options.mergeMode"]),
        // Target/SFSyncUpTarget.m newFromDict: no target is the default (collection) target.
        (#"{"syncName": "s", "syncType": "syncUp", "soupName": "accounts", \#(options)}"#, ["syncs[0].target"]),
        // Target/SFParentChildrenSyncDownTarget.m: no parentSoqlFilter (no WHERE), no field
        // lists (only id and date), Util/SFParentChildrenSyncHelper.m: no relationshipType is LOOKUP.
        (#"{"syncName": "s", "syncType": "syncDown", "soupName": "accounts", "target": {"type": "parent_children", \#(family)}, \#(options)}"#,
         ["syncs[0].target.relationshipType", "syncs[0].target.parentFieldlist", "syncs[0].target.childrenFieldlist", "syncs[0].target.parentSoqlFilter"]),
        // Target/SFSyncDownTarget.m newFromDict: an iOSImpl runs its class whatever type says.
        (#"{"syncName": "s", "syncType": "syncDown", "soupName": "accounts", "target": {"type": "sosl", "iOSImpl": "SFSoqlSyncDownTarget", "query": "SELECT Id FROM Account"}, \#(options)}"#,
         ["syncs[0].target.type"]),
        // Target/SFSyncUpTarget.m newFromDict: the iOSImpl runs, androidImpl is never read.
        (#"{"syncName": "s", "syncType": "syncUp", "soupName": "accounts", "target": {"iOSImpl": "SFSyncUpTarget", "androidImpl": "com.salesforce.androidsdk.mobilesync.target.BatchSyncUpTarget"}, \#(options)}"#,
         ["syncs[0].target.androidImpl"]),
        // Target/SFSyncDownTarget.m: a custom target needs its iOSImpl only (androidImpl is Android's).
        (#"{"syncName": "s", "syncType": "syncDown", "soupName": "accounts", "target": {"type": "custom", "iOSImpl": "MyTarget"}, \#(options)}"#, []),
        // Target/SFSyncUpTarget.m newFromDict: with an iOSImpl the type is not read.
        (#"{"syncName": "s", "syncType": "syncUp", "soupName": "accounts", "target": {"type": "custom", "iOSImpl": "MySyncUp"}, \#(options)}"#, []),
    ])
    func whatIOSAcceptsLoadsWithAWarning(_ sync: String, _ keyPaths: [String]) throws {
        let config = try SyncConfig.load(json: Self.file(sync), soupNames: ["accounts", "contacts"])
        #expect(config.syncs.count == 1)
        #expect(config.warnings.map(\.keyPath) == keyPaths)
        #expect(config.warnings.allSatisfy { $0.file == "usersyncs.json" && $0.line != nil && !$0.message.isEmpty })
    }

    // Util/SFSyncState.m: the defaults a sync without options runs with.
    @Test func aSyncWithoutOptionsRunsInOverwriteMode() throws {
        let config = try SyncConfig.load(json: Self.file(#"{"syncName": "s", "syncType": "syncDown", "soupName": "accounts", \#(Self.mru)}"#))
        #expect(config.syncs[0].mergeMode == .overwrite)
        #expect(config.warnings[0].description.hasPrefix("usersyncs.json:1: syncs[0].options: no options: merge mode OVERWRITE applies"))
    }

    // Target/SFParentChildrenSyncDownTarget.m getSoqlForRemoteIds / query building: no filter,
    // no WHERE (but the resync's date).
    @Test func aParentChildrenTargetWithoutFilterBuildsItsQueryWithoutWhere() throws {
        let json = Self.file(#"{"syncName": "s", "syncType": "syncDown", "soupName": "accounts", "target": {"type": "parent_children", \#(Self.family), "parentFieldlist": ["Name"], "childrenFieldlist": ["LastName"], "relationshipType": "LOOKUP"}}"#)
        let spec = try SyncConfig.load(json: json).syncs[0]
        let target = try SyncDownTarget(spec: spec)
        #expect(target.details.parentSoqlFilter == "")
        #expect(target.details.relationshipType == .lookup)
        let json2 = target.json
        #expect(json2["parentSoqlFilter"] == "", "written as the SDK's empty filter")
    }

    @Test(arguments: [
        // Target/SFSyncDownTarget.m newFromDict: "custom" with no class makes no target.
        (#"{"syncName": "s", "syncType": "syncDown", "soupName": "accounts", "target": {"type": "custom"}, \#(options)}"#, "syncs[0].target.iOSImpl"),
        // Target/SFSyncDownTarget.m queryTypeFromString: no type and no class makes no target.
        (#"{"syncName": "s", "syncType": "syncDown", "soupName": "accounts", "target": {"query": "SELECT Id FROM Account"}, \#(options)}"#, "syncs[0].target.type"),
        // Target/SFSyncUpTarget.m targetTypeFromString: a type other than rest and no class.
        (#"{"syncName": "s", "syncType": "syncUp", "soupName": "accounts", "target": {"type": "batch"}, \#(options)}"#, "syncs[0].target.type"),
        // Kept refusals (deliberate): a misspelt merge mode reads as OVERWRITE on iOS and would
        // overwrite local changes; a misspelt sync type reads as a sync up.
        (#"{"syncName": "s", "syncType": "syncDown", "soupName": "accounts", \#(mru), "options": {"mergeMode": "LEAVE_IF_CHANGE"}}"#, "syncs[0].options.mergeMode"),
        (#"{"syncName": "s", "syncType": "syncdown", "soupName": "accounts", \#(mru), \#(options)}"#, "syncs[0].syncType"),
    ])
    func whatIOSFailsOnIsRefused(_ sync: String, _ keyPath: String) {
        let error = #expect(throws: ConfigError.self) { _ = try SyncConfig.load(json: Self.file(sync)) }
        #expect(error?.keyPath == keyPath, "\(String(describing: error))")
    }

    // Given the app's targets, a custom class none registers is refused at load, naming the
    // class and the fix.
    @Test func anUnregisteredCustomClassIsRefusedAtLoadWhenTheTargetsAreGiven() throws {
        let json = Self.file(#"{"syncName": "s", "syncType": "syncDown", "soupName": "accounts", "target": {"type": "custom", "iOSImpl": "MyTarget", "region": "EMEA"}, \#(Self.options)}"#)
        var targets = SyncTargetRegistry()
        let error = #expect(throws: ConfigError.self) { _ = try SyncConfig.load(json: json, targets: targets) }
        #expect(error?.keyPath == "syncs[0].target.iOSImpl")
        #expect(error?.reason.contains("'MyTarget'") == true && error?.reason.contains("registerSyncDown(\"MyTarget\")") == true)
        targets.registerSyncDown("MyTarget") { _ in NoRecords() }
        let spec = try SyncConfig.load(json: json, targets: targets).syncs[0]
        #expect(spec.targetType == .custom && spec.target.iOSImpl == "MyTarget")
        #expect(spec.target.customProperties == ["region": "EMEA"], "the target's own keys stay for its factory")
    }

    // The doc comment's example.
    @Test func theDocumentedExampleWarnsAboutOptions() throws {
        let config = try SyncConfig.load(json: #"{"syncs": [{"syncName": "accounts", "syncType": "syncDown", "soupName": "Account", "target": {"type": "soql", "query": "SELECT Id, Name FROM Account"}}]}"#)
        #expect(config.warnings.map(\.keyPath) == ["syncs[0].options"])
    }
}

/// A custom target that finds nothing.
struct NoRecords: CustomSyncDownTarget {
    func startFetch(syncManager: SyncManager, maxTimeStamp: Int64) async throws -> [[String: JSONValue]] { [] }
}
