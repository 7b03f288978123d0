import AppKernelCore
import AppKernelStore
import ChildProcess
import Foundation
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A writer process killed at any moment leaves the store at its last commit.
struct CrashTests {
    static let base: Set<IndexSpec> = [IndexSpec(path: "batch", type: .integer), IndexSpec(path: "name", type: .string),
                                       IndexSpec(path: "body", type: .fullText)]

    /// `StoreCrashWriter` (see its header) writes transactions in a loop and prints
    /// "committed n" after each; this test SIGKILLs it 200 times in CI (1,000 with
    /// `APPKERNEL_KILL_TESTS=long`), each time after a varied number (1–4) of commits it has seen
    /// and a random 0–2 ms more — the writer being mid-transaction, mid-fsync, mid-alter or
    /// between two, wherever the kill lands. After each kill the store opens, SQLite's
    /// `integrity_check` is ok, and the invariants hold: `items` has exactly the counter's number
    /// of entries, every batch is whole (1 + n % 23 entries) or gone, the full-text table agrees,
    /// the indexes are one of the two sets, and every commit the writer reported is there
    /// (`synchronous = FULL`).
    ///
    /// The same test runs the writer's broken variant (`--broken`: every statement commits on its
    /// own, no transaction) to show that it can fail: each kill after which an invariant does not
    /// hold counts as caught. The long mode requires at least one; CI only reports the figures.
    ///
    /// The sealed variant (issue 30) runs the writer on a sealed store (`STORE_CRASH_WRITER_KEY`):
    /// the sealed VFS's WAL keeps the same guarantees.
    @Test(.reportsProgress, arguments: [(false, false), (true, false), (false, true)])
    func aWriterKilledAtAnyMomentLeavesWholeTransactions(broken: Bool, sealed: Bool) async throws {
        let key = sealed ? try SealedStoreTests.key(42) : nil
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let file = directory.file("crash.sqlite")
        try #require(FileManager.default.isExecutableFile(atPath: ChildProcess.executable("StoreCrashWriter").path), "build the StoreCrashWriter helper first")
        var rounds = KillRounds(ci: broken ? 20 : 200)
        var lastRound = 0
        var caught = 0
        for round in 1...rounds.count {
            let writer = try ChildProcess(executable: "StoreCrashWriter", environment: sealed ? ["STORE_CRASH_WRITER_KEY": "42"] : [:],
                                          arguments: broken ? [file.path, "--broken"] : [file.path])
            // 1, 4, 3, 2, 1, 4, …: a varied number of commits, then a random moment.
            let commits = 1 + (round * 3) % 4
            let wrote = await writer.waitUntil(seconds: 30) { lines, status in lines.count >= commits || status != nil }
            try #require(wrote && writer.status == nil, "round \(round): the writer stopped: \(writer.errors)")
            await KillRounds.pause(microseconds: rounds.next(in: 0...2_000))
            writer.send(SIGKILL)
            let status = await writer.waitForExit(seconds: 30)
            try #require(status == 128 + SIGKILL, "round \(round): the writer exited \(String(describing: status)): \(writer.errors)")
            let reported = writer.lines.compactMap { Int($0.dropFirst("committed ".count)) }.max() ?? 0
            let (problems, committedRound) = try Self.check(file, reported: reported, lastRound: lastRound, key: key)
            if broken {
                if !problems.isEmpty { caught += 1 }
                // The broken writer's damage stays: start the next round from an empty store.
                if !problems.isEmpty { try? FileManager.default.removeItem(at: file); lastRound = 0; continue }
            } else {
                #expect(problems.isEmpty, "round \(round) (seed \(rounds.seed)): \(problems)")
            }
            lastRound = committedRound ?? lastRound
        }
        if broken {
            rounds.report("StoreCrashWriter --broken", caught: caught)
            if rounds.isLong { #expect(caught > 0, "the broken writer was never caught in \(rounds.count) kills") }
        } else {
            #expect(lastRound > rounds.count, "the writer made progress across the kills")
        }
    }

    /// The invariants the writer's transactions keep; returns what does not hold, and the
    /// counter's round.
    static func check(_ file: URL, reported: Int, lastRound: Int, key: SmartStore.EncryptionKey? = nil) throws -> (problems: [String], round: Int?) {
        let store = try SmartStore(fileURL: file, key: key)
        defer { store.close() }
        var problems: [String] = []
        let integrity = try store.query(.smart("SELECT integrity_check FROM pragma_integrity_check"))
        if integrity != [["ok"]] { problems.append("integrity_check: \(integrity)") }
        guard let counter = try store.query(.exact(soupName: "counter", path: "key", matchKey: "counter")).first,
              let committedRound = counter["round"]?.intValue else {
            return (problems + (reported > 0 ? ["no counter after \(reported) reported commits"] : []), nil)
        }
        if committedRound < reported { problems.append("commit \(reported) was reported, the store has \(committedRound)") }
        if committedRound < lastRound { problems.append("the store went back from \(lastRound) to \(committedRound)") }
        let items = try store.count(.all(soupName: "items"))
        if items != counter["items"]?.intValue { problems.append("\(items) items, the counter says \(String(describing: counter["items"]))") }
        let matching = try store.count(.match(soupName: "items", path: "body", matchKey: "lorem"))
        if matching != items { problems.append("full text: \(matching) of \(items)") }
        let batches = try store.query(.smart("SELECT {items:batch}, count(*) FROM {items} GROUP BY {items:batch}", pageSize: 100_000))
        for batch in batches {
            guard let number = batch[0]?.intValue, let size = batch[1]?.intValue else { continue }
            if size != 1 + number % 23 { problems.append("batch \(number) has \(size) entries") }
        }
        let indexes = Set(try store.indexSpecs(forSoup: "items"))
        if indexes != base && indexes != base.union([IndexSpec(path: "extra", type: .json1)]) { problems.append("indexes \(indexes)") }
        return (problems, committedRound)
    }
}
