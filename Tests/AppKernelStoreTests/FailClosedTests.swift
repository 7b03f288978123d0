import AppKernelCore
@testable import AppKernelStore
import Dispatch
import Foundation
import Testing

/// Hostile inputs at the store's public API (issue 29): each is a typed ``StoreError`` that names
/// the limit, never a trap, a hang or an error that poisons what was stored before.
@Suite struct FailClosedTests {
    /// An entry whose member `deep` holds `levels` nested arrays around a 1: the entry itself is
    /// one level more.
    private static func nested(_ levels: Int) -> [String: JSONValue] {
        var value: JSONValue = .int(1)
        for _ in 0..<levels { value = .array([value]) }
        return ["Name": "deep", "deep": value]
    }

    // MARK: Page arguments

    @Test func extremePageArgumentsAreTypedErrorsNamingTheArgument() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try Fixture.store(in: directory)
        let cases: [(QuerySpec, Int, String)] = [
            (.all(soupName: "accounts"), Int.max, "pageIndex"),
            (.all(soupName: "accounts"), -1, "pageIndex"),
            (.all(soupName: "accounts", pageSize: Int.max), 2, "pageIndex"),
            (.all(soupName: "accounts", pageSize: 1 << 40), 1 << 40, "pageIndex"),
            (.all(soupName: "accounts", pageSize: 0), 0, "pageSize"),
            (.all(soupName: "accounts", pageSize: Int.min), 1, "pageSize"),
            (.smart("SELECT {accounts:Name} FROM {accounts}"), Int.max, "pageIndex"),
            (.smart("SELECT {accounts:Name} FROM {accounts}", pageSize: Int.max), Int.max, "pageIndex"),
            (.smart("SELECT {accounts:Name} FROM {accounts}", pageSize: -5), 0, "pageSize"),
        ]
        for (spec, pageIndex, argument) in cases {
            let error = storeError { _ = try store.query(spec, pageIndex: pageIndex) }
            #expect(error?.code == .invalidQuery, "\(spec) page \(pageIndex)")
            #expect(error?.reason.contains(argument) == true, "\(error?.reason ?? "")")
            #expect(error?.reason.contains(String(argument == "pageIndex" ? pageIndex : spec.pageSize)) == true, "\(error?.reason ?? "")")
            do {
                _ = try await store.queryConcurrently(spec, pageIndex: pageIndex)
                Issue.record("\(spec) page \(pageIndex) was accepted")
            } catch {
                #expect(error.code == .invalidQuery)
            }
        }
        // The last page that can exist is still a query (it is empty).
        #expect(try store.query(.all(soupName: "accounts", pageSize: 1), pageIndex: Int.max).isEmpty)
        #expect(try store.query(.all(soupName: "accounts", pageSize: Int.max), pageIndex: 0).count == 10)
    }

    // MARK: Nesting

    @Test func anEntryNestedTooDeepIsRefusedBeforeAnythingIsWritten() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try Fixture.store(in: directory)
        for levels in [512, 600, 5_000, 10_000] {
            let error = storeError { try store.upsert([Fixture.accountEntries()[0], Self.nested(levels)], intoSoup: "accounts") }
            #expect(error?.code == .invalidEntry)
            #expect(error?.soup == "accounts")
            #expect(error?.reason.contains("entry 1") == true, "\(error?.reason ?? "")")
            #expect(error?.reason.contains("more than 512 levels") == true, "\(error?.reason ?? "")")
        }
        #expect(try store.count(.all(soupName: "accounts")) == 10, "nothing of the refused batches was written")
    }

    @Test func anEntryAsDeepAsTheLimitIsStoredAndReadBack() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try Fixture.store(in: directory)
        // 511 arrays inside the entry: 512 levels, the limit.
        let saved = try store.upsert([Self.nested(511)], intoSoup: "accounts")
        #expect(try store.query(.all(soupName: "accounts", pageSize: 100)).count == 11, "the soup stays queryable")
        let id = try #require(saved.soupEntryIds.first)
        #expect(try store.retrieve([id], fromSoup: "accounts").first?["deep"] == Self.nested(511)["deep"])
    }

    // MARK: Damaged rows

    @Test func aDamagedEntryIsATypedErrorNamingItsID() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.file("store.sqlite").path
        var store: SmartStore? = try Fixture.store(in: directory)
        store?.close()
        store = nil
        let table = "TABLE_1"
        // JSON SQLite reads (its indexes accept it) but nested past the store's reader: what an
        // older build could store, or a damaged page could hold.
        let deep = #"{"Name":"Acme 3","deep":"# + String(repeating: "[", count: 600) + String(repeating: "]", count: 600) + "}"
        try RawDatabase.execute("UPDATE \(table) SET soup = '\(deep)' WHERE id = 4", at: path)
        let reopened = try SmartStore(fileURL: directory.file("store.sqlite"))
        let error = storeError { _ = try reopened.query(.all(soupName: "accounts", pageSize: 100)) }
        #expect(error?.code == .unreadableEntry)
        #expect(error?.soup == "accounts")
        #expect(error?.entryID == 4)
        #expect(error?.description.contains("entry 4") == true, "\(error?.description ?? "")")
        // The others are still readable, one by one or by a query that skips it.
        #expect(try reopened.query(.exact(soupName: "accounts", path: "Name", matchKey: "Acme 0")).count == 1)
        #expect(try reopened.retrieve([1, 2, 3, 5], fromSoup: "accounts").count == 4)
        // …and removing the damaged one heals the soup.
        _ = try reopened.remove([4], fromSoup: "accounts")
        #expect(try reopened.query(.all(soupName: "accounts", pageSize: 100)).count == 9)
    }

    // MARK: Query budget

    private static let endless = "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT n FROM r WHERE n < 0"

    @Test func aStoreManagerOpensItsStoresWithItsConfiguration() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let manager = StoreManager(root: directory.url, configuration: SmartStore.Configuration(queryStepBudget: 1_000_000))
        let store = try manager.store(for: .global)
        defer { store.close() }
        let error = storeError { _ = try store.query(.smart(Self.endless)) }
        #expect(error?.code == .queryBudgetExceeded)
        #expect(error?.reason.contains("1000000") == true, "\(error?.reason ?? "")")
    }

    @Test func anEndlessRecursiveQueryStopsAtItsBudget() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try SmartStore(fileURL: directory.file("store.sqlite"), configuration: SmartStore.Configuration(queryStepBudget: 2_000_000))
        let error = storeError { _ = try store.query(.smart(Self.endless)) }
        #expect(error?.code == .queryBudgetExceeded)
        #expect(error?.reason.contains("2000000") == true, "\(error?.reason ?? "")")
        #expect(error?.reason.contains("queryStepBudget") == true, "\(error?.reason ?? "")")
        #expect(storeError { _ = try store.count(.smart(Self.endless)) }?.code == .queryBudgetExceeded)
        do {
            _ = try await store.queryConcurrently(.smart(Self.endless))
            Issue.record("the endless query returned")
        } catch {
            #expect(error.code == .queryBudgetExceeded)
        }
        // The connection is usable after: the budget is per query.
        try store.registerSoup(Fixture.accounts)
        try store.upsert(Fixture.accountEntries(), intoSoup: "accounts")
        #expect(try store.count(.all(soupName: "accounts")) == 10)
        #expect(try await store.countConcurrently(.all(soupName: "accounts")) == 10)
    }

    @Test func theDefaultBudgetIsFiniteAndCancellingStillInterrupts() async throws {
        #expect(SmartStore.Configuration().queryStepBudget == SmartStore.Configuration.defaultQueryStepBudget)
        #expect(SmartStore.Configuration.defaultQueryStepBudget > 0)
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try SmartStore(fileURL: directory.file("store.sqlite"), configuration: SmartStore.Configuration(queryStepBudget: Int.max))
        let long = Task { try await store.queryConcurrently(.smart(Self.endless)) }
        // The writer works meanwhile, as in ConcurrencyTests' twin — no sleep on the real clock;
        // cancelled before or while it runs, the query ends `cancelled`.
        try store.registerSoup(Fixture.accounts)
        try store.upsert(Fixture.accountEntries(), intoSoup: "accounts")
        long.cancel()
        do {
            _ = try await long.value
            Issue.record("the endless query returned")
        } catch let error as StoreError {
            #expect(error.code == .cancelled)
        }
    }

    // MARK: Two instances

    @Test func aSecondInstanceWaitsForALockInsteadOfFailingBusy() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.file("store.sqlite").path
        // Another connection holds the new (not yet WAL) file exclusively for a while.
        #expect(FileManager.default.createFile(atPath: path, contents: nil))
        // Handed to one other thread, which alone uses it from then on.
        nonisolated(unsafe) let holder = try SQLiteConnection(path: path, readOnly: false)
        try holder.execute("BEGIN EXCLUSIVE; CREATE TABLE held (x);")
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(200)) { try? holder.execute("ROLLBACK"); holder.close() }
        let store = try SmartStore(fileURL: directory.file("store.sqlite"))
        try store.registerSoup(Fixture.accounts)
        #expect(try store.count(.all(soupName: "accounts")) == 0)
    }

    @Test func twoInstancesWritingAtOnceNeverSeeBusy() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("store.sqlite")
        try SmartStore(fileURL: url).registerSoup(Fixture.accounts)
        let writes = 100
        let failures = await withTaskGroup(of: [String].self) { group in
            for instance in 0..<2 {
                group.addTask {
                    var failures: [String] = []
                    do {
                        let store = try SmartStore(fileURL: url)
                        for index in 0..<writes {
                            do { try store.upsert([["Name": .string("i\(instance)-\(index)")]], intoSoup: "accounts") } catch { failures.append("\(error)") }
                        }
                        store.close()
                    } catch { failures.append("open: \(error)") }
                    return failures
                }
            }
            return await group.reduce(into: []) { $0 += $1 }
        }
        #expect(failures.isEmpty, "\(failures.prefix(3))")
        #expect(try SmartStore(fileURL: url).count(.all(soupName: "accounts")) == 2 * writes)
    }

    // MARK: Disk full

    @Test func aFullDiskSaysDiskFullWithAFix() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try Fixture.store(in: directory)
        try store.withWriterConnection { connection in try connection.execute("PRAGMA max_page_count = 1") }
        let big = (0..<200).map { ["Name": JSONValue.string(String(repeating: "x", count: 4_000) + "\($0)")] }
        let error = storeError { try store.upsert(big, intoSoup: "accounts") }
        #expect(error?.code == .diskFull)
        #expect(error?.description.contains("disk full") == true, "\(error?.description ?? "")")
        #expect(error?.description.contains("free") == true, "a fix hint: \(error?.description ?? "")")
        #expect(try store.count(.all(soupName: "accounts")) == 10, "nothing half-written")
    }

    @Test func sqliteAndPOSIXFullDiskCodesMapToDiskFull() {
        #expect(StoreError(SQLiteFailure(code: 13, message: "database or disk is full"), file: "/x").code == .diskFull)
        #expect(StoreError(SQLiteFailure(code: 4874, message: "disk I/O error", systemErrno: ENOSPC), file: "/x").code == .diskFull)
        #expect(StoreError(SQLiteFailure(code: 4874, message: "disk I/O error", systemErrno: EIO), file: "/x").code == .sqliteError)
    }
}
