import AppKernelCore
import AppKernelStore
import AppKernelSync
import Foundation
import Testing

/// `stop()`, `restart(restartStoppedSyncs:)`, `isStopped` / `isStopping`, after
/// SalesforceMobileSDK-iOS libs/MobileSync/MobileSync/Classes/Manager/SFMobileSyncSyncManager.m
/// (stop, restart:updateBlock:, checkAcceptingSyncs) and SFSyncTask.m (shouldStop marks the sync
/// STOPPED), and MobileSyncTests/SyncManagerTests.m's stop/restart tests.
struct StopRestartTests {
    static let syncs = """
    {"syncs": [{"syncName": "contacts", "syncType": "syncDown", "soupName": "contacts",
                "target": {"type": "soql", "query": "SELECT Id, LastName, AccountId, LastModifiedDate FROM Contact"},
                "options": {"mergeMode": "OVERWRITE"}}]}
    """

    @Test func aStoppedManagerRefusesSyncsUntilRestarted() async throws {
        let world = try await SyncFixture.make(syncsJSON: Self.syncs)
        defer { world.remove() }
        #expect(!world.syncs.isStopped && !world.syncs.isStopping)
        let notStopped = await syncError { _ = try await world.syncs.restart() }
        #expect(notStopped?.code == .managerNotStopped)
        world.syncs.stop()
        #expect(world.syncs.isStopped, "nothing ran: stopped at once")
        let refused = await syncError { _ = try await world.syncs.reSync(named: "contacts") }
        #expect(refused?.code == .managerStopped)
        #expect(refused?.reason.contains("restart") == true)
        try await world.syncs.restart()
        #expect(!world.syncs.isStopped)
        #expect(try await world.syncs.reSync(named: "contacts").status == .done)
    }

    @Test func aStopDuringARunStopsTheSyncAfterAWholePageAndARestartResumesIt() async throws {
        let world = try await SyncFixture.make(queryBatchSize: 2, syncsJSON: Self.syncs)
        defer { world.remove() }
        let manager = world.syncs
        let stoppingSeen = Locked<Bool>(false)
        let error = await syncError {
            _ = try await manager.reSync(named: "contacts") { state in
                if state.status == .running, state.progress > 0, !manager.isStopping, !manager.isStopped {
                    manager.stop()
                    stoppingSeen.withLock { $0 = manager.isStopping }
                }
            }
        }
        #expect(error?.code == .stopped)
        #expect(stoppingSeen.withLock { $0 }, "stopping while the sync ran")
        #expect(manager.isStopped, "stopped once the sync ended")
        let stopped = try #require(try manager.syncStatus(forName: "contacts"))
        #expect(stopped.status == .stopped)
        let written = try world.entries("contacts").count
        #expect(written == 2, "the whole first page, nothing after")
        let restarted = try await manager.restart(restartStoppedSyncs: true)
        #expect(restarted.map(\.status) == [.done])
        #expect(try world.entries("contacts").count == world.server("Contact").count)
    }
}
