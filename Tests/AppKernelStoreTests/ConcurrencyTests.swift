import AppKernelCore
import AppKernelStore
import Dispatch
import Foundation
import Testing

/// The writer mutex, the read-only connection of the async queries, and cancellation — from the
/// main actor, as an app uses the store.
@MainActor @Suite(.sealedAndPlain)
struct ConcurrencyTests {
    /// Smart SQL that counts to five billion: it runs for minutes unless interrupted.
    static let endless = QuerySpec.smart("WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 5000000000) SELECT count(*) FROM c")

    /// Runs `body` on a dispatch thread; returns its result.
    nonisolated static func onAnotherThread<Result: Sendable>(_ body: @escaping @Sendable () throws -> Result) async throws -> Result {
        try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async { continuation.resume(with: Swift.Result(catching: body)) }
        }
    }

    @Test func anAsyncQueryReadsTheLastCommitWhileAWriterHoldsATransaction() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try Fixture.store(in: directory)
        let (inside, entered) = AsyncStream.makeStream(of: Void.self)
        let release = DispatchSemaphore(value: 0)
        // A writer on another thread opens a transaction, writes, and waits inside it.
        let writer = Task.detached {
            try await Self.onAnotherThread {
                try store.inTransaction { tx in
                    try tx.upsert([["Name": "Uncommitted"]], intoSoup: "accounts")
                    entered.yield()
                    release.wait()
                    return try tx.count(.all(soupName: "accounts"))
                }
            }
        }
        for await _ in inside { break }
        do {
            defer { release.signal() }
            // The writer holds the mutex; the reader neither waits for it nor sees its writes.
            #expect(try await store.countConcurrently(.all(soupName: "accounts")) == 10)
            #expect(try await store.queryConcurrently(.exact(soupName: "accounts", path: "Name", matchKey: "Uncommitted")).isEmpty)
        }
        #expect(try await writer.value == 11)
        #expect(try await store.countConcurrently(.all(soupName: "accounts")) == 11, "then it sees the commit")
    }

    @Test func writersAndTheMainActorGoOnWhileALongQueryRunsAndCancellingItInterruptsIt() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try Fixture.store(in: directory)
        let long = Task { try await store.queryConcurrently(Self.endless) }
        // The main actor keeps writing and reading (synchronously, on the writer connection).
        for round in 0..<20 {
            try store.upsert([["Name": .string("Round \(round)")]], intoSoup: "accounts")
        }
        #expect(try store.count(.all(soupName: "accounts")) == 30)
        long.cancel()
        let outcome = await long.result
        #expect(failureCode(outcome) == .cancelled, "\(outcome)")
        // The reader is usable afterwards.
        #expect(try await store.countConcurrently(.all(soupName: "accounts")) == 30)
    }

    @Test func closingTheStoreInterruptsALongQuery() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try Fixture.store(in: directory)
        let long = Task { try await store.queryConcurrently(Self.endless) }
        store.close()
        #expect([.cancelled, .storeClosed].contains(failureCode(await long.result)))
        #expect(!store.soupExists("accounts"))
    }

    @Test func aQueryCancelledBeforeItStartsDoesNotRun() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try Fixture.store(in: directory)
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await store.queryConcurrently(Self.endless)
        }
        let outcome = await task.result
        #expect(failureCode(outcome) == .cancelled)
    }

    @Test func manyTasksWriteThroughOneStore() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try Fixture.store(in: directory, accounts: false)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for writer in 0..<8 {
                group.addTask {
                    for index in 0..<25 {
                        try store.upsert([["Name": .string("w\(writer)-\(index)"), "Employees": .int(writer)]], intoSoup: "accounts")
                        _ = try await store.countConcurrently(.exact(soupName: "accounts", path: "Employees", matchKey: .int(writer)))
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(try store.count(.all(soupName: "accounts")) == 200)
        let ids = try store.query(.smart("SELECT count(DISTINCT {accounts:_soupEntryId}), max({accounts:_soupEntryId}) FROM {accounts}"))
        #expect(ids == [[200, 200]], "every id handed out once")
    }

    @Test func theReaderFollowsSchemaChangesAndClosing() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try Fixture.store(in: directory)
        #expect(try await store.countConcurrently(.all(soupName: "accounts")) == 10)
        try store.registerSoup(SoupSpec(name: "leads", indexes: [IndexSpec(path: "Email", type: .string)]))
        try store.upsert([["Email": "a@b.c"]], intoSoup: "leads")
        #expect(try await store.queryConcurrently(.exact(soupName: "leads", path: "Email", matchKey: "a@b.c")).count == 1)
        try store.alterSoup("leads", indexes: [IndexSpec(path: "Email", type: .string), IndexSpec(path: "Company", type: .string)])
        #expect(try await store.countConcurrently(.exact(soupName: "leads", path: "Company", matchKey: .null)) == 1)
        try store.removeSoup("leads")
        await #expect(throws: StoreError.self) { try await store.countConcurrently(.all(soupName: "leads")) }
        store.close()
        let closed = await Task { try await store.countConcurrently(.all(soupName: "accounts")) }.result
        #expect(failureCode(closed) == .storeClosed)
    }
}

/// The store error's code, when `result` failed with one.
func failureCode<Success>(_ result: Result<Success, any Error>) -> StoreError.Code? {
    if case .failure(let error) = result { return (error as? StoreError)?.code }
    return nil
}
