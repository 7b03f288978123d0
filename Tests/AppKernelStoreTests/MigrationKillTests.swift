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

/// A plain store being sealed — its first open with a key runs the sealed VFS's migration
/// (issue 30's research memo §7.2: a sealed copy by VACUUM INTO, verified, a second name linked to
/// the plain file, the copy renamed over it, the plain bytes overwritten and unlinked) — killed at
/// any moment loses nothing and leaves no plaintext once it is opened with the key again.
struct MigrationKillTests {
    static let entryCount = 300

    /// Where a kill landed, read from the files it left (before the store is opened again).
    enum Moment: String, CaseIterable {
        case beforeCopy = "before the sealed copy (store plain, untouched)"
        case duringCopy = "during the sealed copy, its verification or sync (.sealing present)"
        case linked = "between the link and the rename (.plain-old = the store)"
        case renamed = "after the rename, before the wipe (.plain-old plain, store sealed)"
        case done = "after the migration (store sealed, nothing left)"
    }

    /// `StoreCrashWriter --migrate` (see its header) waits for a line, then opens the plain store
    /// with the key; the test sends the line, waits a random 0…1.25× of one migration's length
    /// (measured first, un-killed) and SIGKILLs it — 200 times (1,000 with
    /// `APPKERNEL_KILL_TESTS=long`), one round in ten as soon as the child is ready to open (the
    /// kill then lands at the migration's first steps). Each round starts from the same plain store
    /// (300 entries, a canary in each); after the kill the store opens with the key (finishing or
    /// redoing the migration), SQLite's `integrity_check` is ok, every entry is there, no
    /// `.sealing` or `.plain-old` file is left, the store is sealed, and no file beside it holds
    /// the canary's bytes. Prints where the kills landed.
    @Test func aMigrationKilledAtAnyMomentLosesNothingAndLeavesNoPlaintext() async throws {
        try #require(FileManager.default.isExecutableFile(atPath: ChildProcess.executable("StoreCrashWriter").path), "build the StoreCrashWriter helper first")
        let key = try SealedStoreTests.key(42)
        let canary = "Canary-\(UUID().uuidString)"
        let template = try TemporaryDirectory()
        defer { template.remove() }
        let store = try SmartStore(fileURL: template.file("store.sqlite"))
        try store.registerSoups([Fixture.accounts])
        try store.upsert(SealedStoreTests.entries(canary, count: Self.entryCount), intoSoup: "accounts")
        store.close()
        let plainFiles = try FileManager.default.contentsOfDirectory(atPath: template.url.path).map { ($0, try Data(contentsOf: template.file($0))) }
        #expect(plainFiles.contains { $0.1.range(of: Data(canary.utf8)) != nil }, "the plain store holds the canary in clear")

        // One migration, not killed: how long the open with the key takes (the longest of 3).
        var span = 0
        for _ in 0..<3 {
            let directory = try Self.copy(plainFiles)
            defer { directory.remove() }
            let child = try Self.start(directory)
            child.write("go\n")
            let migrated = await child.waitUntil(seconds: 30) { lines, status in lines.contains { $0.hasPrefix("migrated ") } || status != nil }
            try #require(migrated && child.status == nil, "the migration did not finish: \(child.errors)")
            span = max(span, child.lines.compactMap { $0.hasPrefix("migrated ") ? Int($0.dropFirst("migrated ".count)) : nil }.first ?? 0)
            child.send(SIGKILL)
            _ = await child.waitForExit(seconds: 30)
        }
        span = span * 5 / 4

        var rounds = KillRounds(ci: 200)
        var moments: [Moment: Int] = [:]
        for round in 1...rounds.count {
            let directory = try Self.copy(plainFiles)
            defer { directory.remove() }
            let child = try Self.start(directory)
            child.write("go\n")
            if round % 10 != 0 { await KillRounds.pause(microseconds: rounds.next(in: 0...span)) }
            child.send(SIGKILL)
            let status = await child.waitForExit(seconds: 30)
            try #require(status == 128 + SIGKILL, "round \(round): the child exited \(String(describing: status)): \(child.errors)")
            let moment = try Self.moment(directory.file("store.sqlite"))
            moments[moment, default: 0] += 1
            let problems = try Self.check(directory, key: key, canary: canary)
            #expect(problems.isEmpty, "round \(round) (seed \(rounds.seed)), killed \(moment.rawValue): \(problems)")
        }
        figure("kill test StoreCrashWriter --migrate: \(rounds.count) kills in a migration of \(span * 4 / 5) µs (seed \(rounds.seed)"
              + (rounds.isLong ? ", long mode" : "") + "): "
              + Moment.allCases.map { "\(moments[$0] ?? 0) \($0.rawValue)" }.joined(separator: "; "))
        #expect((moments[.duringCopy] ?? 0) > 0 && (moments[.done] ?? 0) > 0, "the kills landed both during and after the migration: \(moments)")
    }

    /// A new directory holding the plain store's files.
    static func copy(_ files: [(String, Data)]) throws -> TemporaryDirectory {
        let directory = try TemporaryDirectory()
        for (name, bytes) in files { try bytes.write(to: directory.file(name)) }
        return directory
    }

    /// The child, ready to migrate the store in `directory` when it reads a line.
    static func start(_ directory: TemporaryDirectory) throws -> ChildProcess {
        let child = try ChildProcess(executable: "StoreCrashWriter", environment: ["STORE_CRASH_WRITER_KEY": "42"],
                                     arguments: ["--migrate", directory.file("store.sqlite").path])
        return child
    }

    static func moment(_ file: URL) throws -> Moment {
        let manager = FileManager.default
        let sealed = try Data(contentsOf: file).prefix(4) == Data("AKS1".utf8)
        if manager.fileExists(atPath: file.path + ".plain-old") {
            let store = try manager.attributesOfItem(atPath: file.path), old = try manager.attributesOfItem(atPath: file.path + ".plain-old")
            return store[.systemFileNumber] as? Int == old[.systemFileNumber] as? Int ? .linked : .renamed
        }
        if manager.fileExists(atPath: file.path + ".sealing") { return .duringCopy }
        return sealed ? .done : .beforeCopy
    }

    /// What does not hold once the store in `directory` is opened with the key.
    static func check(_ directory: TemporaryDirectory, key: SmartStore.EncryptionKey, canary: String) throws -> [String] {
        var problems: [String] = []
        let file = directory.file("store.sqlite")
        do {
            let store = try SmartStore(fileURL: file, key: key)
            defer { store.close() }
            let integrity = try store.query(.smart("SELECT integrity_check FROM pragma_integrity_check"))
            if integrity != [["ok"]] { problems.append("integrity_check: \(integrity)") }
            let count = try store.count(.all(soupName: "accounts"))
            if count != entryCount { problems.append("\(count) entries of \(entryCount)") }
            let last = try store.query(.exact(soupName: "accounts", path: "Name", matchKey: .string("\(canary) \(entryCount - 1)")))
            if last.count != 1 { problems.append("the last entry found \(last.count) times") }
        } catch {
            return ["the store does not open with the key: \(error)"]
        }
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.url.path)
        let leftovers = names.filter { $0.contains(".sealing") || $0.contains(".plain-old") }
        if !leftovers.isEmpty { problems.append("left over: \(leftovers)") }
        if try Data(contentsOf: file).prefix(4) != Data("AKS1".utf8) { problems.append("the store is not sealed") }
        for name in names where try Data(contentsOf: directory.file(name)).range(of: Data(canary.utf8)) != nil {
            problems.append("\(name) holds the canary in clear")
        }
        return problems
    }
}
