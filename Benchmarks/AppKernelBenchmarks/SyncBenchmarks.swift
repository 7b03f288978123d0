import AppKernelCore
import AppKernelREST
import AppKernelEmbeddedOrg
import AppKernelStore
import AppKernelSync
import Foundation

/// MobileSync's sync down at scale: N accounts from an embedded org through `URLSession`, in
/// pages, into a SmartStore file — its time, and how far the process's resident memory rose
/// above where it stood before the sync (the org, its records and the store already open): the
/// pages are streamed into the store, never all held at once.
@MainActor
enum SyncBenchmark {
    struct Figures {
        var records: Int
        var pageSize: Int
        var seconds: Double
        /// Peak resident memory during the sync minus resident memory before it, in MB.
        var peakGrowthMB: Double
        /// Resident memory after the sync minus before it, in MB.
        var residentGrowthMB: Double
        /// Whether the peak could be measured (`/proc/self/clear_refs` resets it on Linux).
        var peakMeasured: Bool
    }

    /// Syncs `records` accounts down in pages of `pageSize`.
    static func measure(records: Int, pageSize: Int) async throws -> Figures {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("sync-bench-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let acme = "00DACME000000001"
        let time = EmbeddedOrg.RecordClock(start: Date(timeIntervalSince1970: 1_795_514_400), step: .milliseconds(1))
        let org = EmbeddedOrg(users: [EmbeddedOrg.User(username: "ada@acme.com", userID: "005ADA000000001", orgID: acme, displayName: "Ada Lovelace")],
                              queryBatchSize: pageSize, recordClock: time)
        let industries: [JSONValue] = ["Energy", "Manufacturing", "Research", "Software"]
        for number in 0..<records {
            org.insert("Account", ["Name": .string("Account \(number)"), "Industry": industries[number % 4], "External_Id__c": .string("EXT-\(number)")],
                       orgID: acme)
        }
        let logged = try await org.loggedInClient()
        let client = RestClient(credentials: await logged.credentials, transport: org.urlSessionTransport())
        let store = try SmartStore(fileURL: directory.appendingPathComponent("store.sqlite"))
        defer { store.close() }
        try store.registerSoup(SoupSpec(name: "accounts", indexes: [IndexSpec(path: "Id", type: .string), IndexSpec(path: "Name", type: .string),
                                                                  IndexSpec(path: "__local__", type: .string)]))
        let syncs = try SyncManager(store: store, restClient: client)
        let target = SyncDownTarget.soql("SELECT Id, Name, Industry, External_Id__c FROM Account", maxBatchSize: pageSize)

        Machine.releaseFreeMemory()
        let peakMeasured = resetPeak()
        let before = Machine.residentKB
        let start = ContinuousClock.now
        let state = try await syncs.syncDown(target: target, soupName: "accounts", syncName: "bench")
        let seconds = Measure.seconds(ContinuousClock.now - start)
        let peak = Double(Machine.status("VmHWM")?.split(separator: " ").first ?? "0") ?? 0
        let after = Machine.residentKB
        guard state.status == .done, try store.count(.all(soupName: "accounts")) == records else {
            throw SyncError(code: .storeFailed, reason: "the benchmark's sync down stored the wrong number of records")
        }
        return Figures(records: records, pageSize: pageSize, seconds: seconds, peakGrowthMB: (peak - before) / 1024,
                       residentGrowthMB: (after - before) / 1024, peakMeasured: peakMeasured)
    }

    /// Resets the process's peak resident size (`VmHWM`) to its current size (Linux:
    /// `echo 5 > /proc/self/clear_refs`); whether it could.
    private static func resetPeak() -> Bool {
        guard let handle = FileHandle(forWritingAtPath: "/proc/self/clear_refs") else { return false }
        defer { try? handle.close() }
        return (try? handle.write(contentsOf: Data("5".utf8))) != nil
    }
}
