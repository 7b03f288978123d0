import AppKernelCore
import AppKernelEmbeddedOrg
import AppKernelStore
import AppKernelSync
import Foundation
import Testing

/// The layout and metadata sync managers and their three fetch modes, against the embedded org,
/// written from the Mobile SDK's SFLayoutSyncManagerTests.m and SFMetadataSyncManagerTests.m.
struct LayoutAndMetadataSyncManagerTests {
    /// SFLayoutSyncManagerTests.m `validateResult:…`: an Account layout, Compact, with sections,
    /// rows and items; the first item not sortable and editable for new.
    func expectAccountCompactLayout(_ layout: Layout?, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let layout = try #require(layout, sourceLocation: sourceLocation)
        #expect(layout.layoutType == "Compact", sourceLocation: sourceLocation)
        #expect(layout.mode == "Edit", sourceLocation: sourceLocation)
        #expect(layout.rawData["Id"] == "Account-Medium-Compact-Edit-(null)", sourceLocation: sourceLocation)
        let item = try #require(layout.sections?.first?.layoutRows?.first?.layoutItems?.first, sourceLocation: sourceLocation)
        #expect(!item.sortable, sourceLocation: sourceLocation)
        #expect(item.editableForNew, sourceLocation: sourceLocation)
        #expect(item.layoutComponents?.first?["apiName"] == "Name", sourceLocation: sourceLocation)
    }

    /// SFMetadataSyncManagerTests.m `validateResult:`.
    func expectAccountMetadata(_ metadata: Metadata?, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let metadata = try #require(metadata, sourceLocation: sourceLocation)
        #expect(metadata.name == "Account", sourceLocation: sourceLocation)
        #expect(metadata.label == "Account", sourceLocation: sourceLocation)
        #expect(metadata.keyPrefix == "001", sourceLocation: sourceLocation)
        #expect(metadata.compactLayoutable && metadata.createable && metadata.searchable, sourceLocation: sourceLocation)
        #expect(metadata.childRelationships?.isEmpty == false, sourceLocation: sourceLocation)
        #expect(metadata.fields?.contains { $0["name"] == "Name" } == true, sourceLocation: sourceLocation)
        #expect(metadata.urls?["describe"] != nil, sourceLocation: sourceLocation)
        #expect(metadata.rawData["Id"] == "Account", sourceLocation: sourceLocation)
    }

    func fetch(_ layouts: LayoutSyncManager, _ mode: FetchMode) async throws -> Layout? {
        try await layouts.fetchLayout(forObjectAPIName: "Account", formFactor: "Medium", layoutType: "Compact", mode: "Edit", fetchMode: mode)
    }

    // testFetchLayoutInServerFirstMode, testFetchLayoutInCacheOnlyMode, testFetchLayoutInCacheFirstModeWithCacheData,
    // testFetchLayoutInCacheFirstModeWithoutCacheData, testFetchLayoutMultipleTimes.
    @Test func layoutsFetchInEachModeAndCacheOneEntry() async throws {
        let world = try await SyncFixture.make()
        defer { world.remove() }
        let layouts = try LayoutSyncManager(syncManager: world.syncs)
        #expect(try world.store.indexSpecs(forSoup: "sfdcLayouts") == [IndexSpec(path: "Id", type: .json1)])
        var mark = world.org.requestLog.count
        #expect(try await fetch(layouts, .cacheOnly) == nil, "nothing cached, nothing asked")
        #expect(world.requests(since: mark).isEmpty)
        try expectAccountCompactLayout(try await fetch(layouts, .cacheFirst))
        #expect(world.requests(since: mark).count == 1, "an empty cache: the server")
        mark = world.org.requestLog.count
        try expectAccountCompactLayout(try await fetch(layouts, .cacheFirst))
        try expectAccountCompactLayout(try await fetch(layouts, .cacheOnly))
        #expect(world.requests(since: mark).isEmpty, "a hydrated cache answers")
        try expectAccountCompactLayout(try await fetch(layouts, .serverFirst))
        try expectAccountCompactLayout(try await fetch(layouts, .serverFirst))
        #expect(world.requests(since: mark).count == 2, "server first asks every time")
        #expect(world.requests(since: mark).allSatisfy { $0.contains("/ui-api/layout/Account") })
        #expect(try world.entries("sfdcLayouts").count == 1, "one row however many fetches")
        // Another variant is another entry; its parts make its Id.
        let full = try await layouts.fetchLayout(forObjectAPIName: "Account", fetchMode: .serverFirst)
        #expect(full?.rawData["Id"] == "Account-(null)-(null)-(null)-(null)")
        #expect(full?.layoutType == "Full")
        #expect(try world.entries("sfdcLayouts").count == 2)
        #expect(try world.entries("syncs_soup").isEmpty, "the one-off syncs' states are gone")
    }

    // testFetchMetadataInServerFirstMode, …CacheOnlyMode, …CacheFirstModeWithCacheData,
    // …CacheFirstModeWithoutCacheData, testFetchMetadataMultipleTimes.
    @Test func metadataFetchesInEachModeAndCachesOneEntry() async throws {
        let world = try await SyncFixture.make()
        defer { world.remove() }
        let metadata = try MetadataSyncManager(syncManager: world.syncs)
        var mark = world.org.requestLog.count
        #expect(try await metadata.fetchMetadata(forObject: "Account", fetchMode: .cacheOnly) == nil)
        #expect(world.requests(since: mark).isEmpty)
        try expectAccountMetadata(try await metadata.fetchMetadata(forObject: "Account", fetchMode: .cacheFirst))
        #expect(world.requests(since: mark).count == 1)
        mark = world.org.requestLog.count
        try expectAccountMetadata(try await metadata.fetchMetadata(forObject: "Account", fetchMode: .cacheFirst))
        try expectAccountMetadata(try await metadata.fetchMetadata(forObject: "Account", fetchMode: .cacheOnly))
        #expect(world.requests(since: mark).isEmpty)
        try expectAccountMetadata(try await metadata.fetchMetadata(forObject: "Account", fetchMode: .serverFirst))
        try expectAccountMetadata(try await metadata.fetchMetadata(forObject: "Account", fetchMode: .serverFirst))
        #expect(world.requests(since: mark).count == 2)
        #expect(world.requests(since: mark).allSatisfy { $0.contains("/sobjects/Account/describe") })
        #expect(try world.entries("sfdcMetadata").count == 1, "testFetchMetadataMultipleTimes: one row")
        #expect(try world.entries("syncs_soup").isEmpty)
    }

    // SFMetadataSyncManager.m fetchFromServer: a FAILED sync answers nil there; here it throws,
    // and neither the cache nor the syncs soup keeps anything of it.
    @Test func aFailedFetchThrowsTheSyncsErrorAndLeavesNothing() async throws {
        let world = try await SyncFixture.make()
        defer { world.remove() }
        let metadata = try MetadataSyncManager(syncManager: world.syncs)
        let layouts = try LayoutSyncManager(syncManager: world.syncs)
        let error = await #expect(throws: SyncError.self) { try await metadata.fetchMetadata(forObject: "NoSuchObject__c", fetchMode: .cacheFirst) }
        #expect(error?.code == .serverFailed)
        let layoutError = await #expect(throws: SyncError.self) { try await layouts.fetchLayout(forObjectAPIName: "NoSuchObject__c", fetchMode: .serverFirst) }
        #expect(layoutError?.code == .serverFailed)
        #expect(try world.entries("sfdcMetadata").isEmpty)
        #expect(try world.entries("sfdcLayouts").isEmpty)
        #expect(try world.entries("syncs_soup").isEmpty)
        // A second manager over the same store finds the soups registered and the cache shared.
        try expectAccountMetadata(try await metadata.fetchMetadata(forObject: "Account", fetchMode: .serverFirst))
        try expectAccountMetadata(try await MetadataSyncManager(syncManager: world.syncs).fetchMetadata(forObject: "Account", fetchMode: .cacheOnly))
    }
}
