import AppKernelCore
import AppKernelStore
import ChildProcess
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A writer process killed at any moment leaves the store at its last commit.
struct CrashTests {
    /// `StoreCrashWriter` (see its header) writes transactions in a loop and prints
    /// "committed n" after each; this test SIGKILLs it 200 times, each time after a varied number
    /// (1–4) of commits it has seen — the writer being mid-transaction, mid-fsync, mid-alter or
    /// between two, wherever the kill lands. After each kill the store opens, SQLite's
    /// `integrity_check` is ok, and the invariants hold: `items` has exactly the counter's number
    /// of entries, every batch is whole (1 + n % 23 entries) or gone, the full-text table agrees,
    /// the indexes are one of the two sets, and every commit the writer reported is there
    /// (`synchronous = FULL`).
    @Test func aWriterKilledAtAnyMomentLeavesWholeTransactions() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let file = directory.file("crash.sqlite")
        try #require(FileManager.default.isExecutableFile(atPath: ChildProcess.executable("StoreCrashWriter").path), "build the StoreCrashWriter helper first")
        let base: Set<IndexSpec> = [IndexSpec(path: "batch", type: .integer), IndexSpec(path: "name", type: .string), IndexSpec(path: "body", type: .fullText)]
        var lastRound = 0
        var kills = 0
        for round in 1...200 {
            let writer = try ChildProcess(executable: "StoreCrashWriter", arguments: [file.path])
            // 1, 4, 3, 2, 1, 4, …: a varied wait, the same on every run.
            let commits = 1 + (round * 3) % 4
            let wrote = await writer.waitUntil(seconds: 30) { lines, status in lines.count >= commits || status != nil }
            try #require(wrote && writer.status == nil, "round \(round): the writer stopped: \(writer.errors)")
            writer.send(SIGKILL)
            let status = await writer.waitForExit(seconds: 30)
            #expect(status == 128 + SIGKILL, "round \(round)")
            kills += 1
            let reported = writer.lines.compactMap { Int($0.dropFirst("committed ".count)) }.max() ?? 0

            let store = try SmartStore(fileURL: file)
            defer { store.close() }
            #expect(try store.query(.smart("SELECT integrity_check FROM pragma_integrity_check")) == [["ok"]], "round \(round)")
            let counter = try #require(try store.query(.exact(soupName: "counter", path: "key", matchKey: "counter")).first, "round \(round)")
            let committedRound = try #require(counter["round"]?.intValue)
            #expect(committedRound >= reported, "round \(round): commit \(reported) was reported, the store has \(committedRound)")
            #expect(committedRound >= lastRound, "round \(round): the store went back")
            lastRound = committedRound
            let items = try store.count(.all(soupName: "items"))
            #expect(items == counter["items"]?.intValue, "round \(round): \(items) items, the counter says \(String(describing: counter["items"]))")
            #expect(try store.count(.match(soupName: "items", path: "body", matchKey: "lorem")) == items, "round \(round): full text")
            let batches = try store.query(.smart("SELECT {items:batch}, count(*) FROM {items} GROUP BY {items:batch}", pageSize: 100_000))
            for batch in batches {
                let number = try #require(batch[0]?.intValue), size = batch[1]?.intValue
                #expect(size == 1 + number % 23, "round \(round): batch \(number) has \(size ?? 0) entries")
            }
            let indexes = Set(try store.indexSpecs(forSoup: "items"))
            #expect(indexes == base || indexes == base.union([IndexSpec(path: "extra", type: .json1)]), "round \(round): \(indexes)")
        }
        #expect(kills == 200)
        #expect(lastRound > 200, "the writer made progress across the kills")
    }
}
