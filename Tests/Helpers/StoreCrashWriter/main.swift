// A child process for AppKernelStoreTests: writes transactions into a SmartStore as fast as it
// can, printing "committed <n>" after each commit, until it is killed. The test SIGKILLs it at
// varied moments and checks that the store always holds whole transactions.
//
// Each transaction n (in one `inTransaction`) inserts 1 + n % 23 entries of batch n into
// `items`; every 2nd also removes the oldest batch whole; every 7th alters `items`' indexes
// (adding or dropping a json1 index on `extra`); and it ends by upserting the counter entry
// (`{"key": "counter", "round": n, "items": <entries in items>}`). So after any kill: the
// number of entries in `items` equals the counter's `items`, every batch is whole or absent, and
// the indexes are one of the two sets.
//
//   StoreCrashWriter <database file> [--broken]
//
// `--broken` does the same writes without a transaction: each entry, removal, index change and
// the counter commit on their own, so a kill between two leaves half a round. The kill test must
// catch it.
//
// With `STORE_CRASH_WRITER_KEY=<seed>` in its environment it writes a sealed store, its key the
// one `SealedStoreTests.key(<seed>)` makes.
//
//   STORE_CRASH_WRITER_KEY=<seed> StoreCrashWriter --migrate <database file>
//
// (issue 30, MigrationKillTests) prints "ready", waits for a line on its standard input, then
// opens the plain store at the file with the key — which seals it in place (the sealed VFS's
// migration, `ak_sealed_migrate`) — and prints "migrated <microseconds the open took>"; then it
// waits to be killed. The test kills it at a random moment after the line it sends.
import AppKernelCore
import AppKernelStore
import Foundation

let arguments = CommandLine.arguments
/// The sealed store's key (the bytes `SealedStoreTests.key(seed)` gives), nil for a plain store.
let key = ProcessInfo.processInfo.environment["STORE_CRASH_WRITER_KEY"].flatMap(UInt8.init).map { seed in
    try! SmartStore.EncryptionKey(bytes: (0..<32).map { UInt8(truncatingIfNeeded: Int($0) * 31 + Int(seed)) })
}

// `StoreCrashWriter <database file> --runs <n> <tag>` (issue 29, two instances on one data home):
// n runs, each opening the store, adding 1 to the shared counter and upserting its own entry
// `<tag>-<run>` in one transaction, then closing it. Prints "runs <ok> errors <n> busy <n>" and
// every error; exits 0 when every run committed.
if arguments.count == 5, arguments[2] == "--runs", let runs = Int(arguments[3]) {
    var failures: [String] = []
    for run in 1...runs {
        do {
            let store = try SmartStore(fileURL: URL(fileURLWithPath: arguments[1]), key: key)
            try store.inTransaction { tx in
                let counter = try tx.query(.exact(soupName: "counter", path: "key", matchKey: "counter")).first?.objectValue
                let count = counter?["count"]?.intValue ?? 0
                try tx.upsert([["key": "counter", "count": .int(count + 1)]], intoSoup: "counter", externalIdPath: "key")
                try tx.upsert([["key": .string("\(arguments[4])-\(run)")]], intoSoup: "runs", externalIdPath: "key")
            }
            store.close()
        } catch {
            failures.append("\(error)")
        }
    }
    let busy = failures.filter { $0.contains("locked") || $0.contains("busy") || $0.contains("SQLite 5") }.count
    print("runs \(runs - failures.count) errors \(failures.count) busy \(busy)")
    for failure in failures { print("error: \(failure)") }
    exit(failures.isEmpty ? 0 : 1)
}
if arguments.count == 3, arguments[1] == "--migrate" {
    guard let key else {
        FileHandle.standardError.write(Data("--migrate needs STORE_CRASH_WRITER_KEY=<seed>\n".utf8))
        exit(2)
    }
    FileHandle.standardOutput.write(Data("ready\n".utf8))
    _ = readLine()
    let start = ContinuousClock.now
    do {
        let store = try SmartStore(fileURL: URL(fileURLWithPath: arguments[2]), key: key)
        let took = (ContinuousClock.now - start).components
        FileHandle.standardOutput.write(Data("migrated \(took.seconds * 1_000_000 + took.attoseconds / 1_000_000_000_000)\n".utf8))
        withExtendedLifetime(store) { while true { sleep(3_600) } }
    } catch {
        FileHandle.standardError.write(Data("\(error)\n".utf8))
        exit(1)
    }
}
guard arguments.count == 2 || (arguments.count == 3 && arguments[2] == "--broken") else {
    FileHandle.standardError.write(Data("usage: StoreCrashWriter <database file> [--broken]\n".utf8))
    exit(2)
}
let broken = arguments.count == 3

func fail(_ error: any Error) -> Never {
    FileHandle.standardError.write(Data("\(error)\n".utf8))
    exit(1)
}

/// Round `n` as the broken variant writes it: every statement commits on its own.
func brokenRound(_ store: SmartStore, _ n: Int, _ items: Int) throws -> Int {
    var total = items
    let size = 1 + n % 23
    for index in 0..<size {
        _ = try store.upsert([["batch": .int(n), "name": .string("item-\(n)-\(index)"), "body": .string("entry \(index) of batch \(n) lorem ipsum"),
                               "extra": .int(index), "__local__": .bool(index % 2 == 0)]], intoSoup: "items")
        total += 1
    }
    if n % 2 == 0, let batch = try store.query(.smart("SELECT min({items:batch}) FROM {items}")).first?[0]?.intValue {
        let ids = try store.query(.smart("SELECT {items:_soupEntryId} FROM {items} WHERE {items:batch} = ?", pageSize: 1_000), whereArgs: [.int(batch)])
        for id in ids.compactMap({ $0[0]?.intValue }) { total -= try store.remove([id], fromSoup: "items") }
    }
    if n % 7 == 0 {
        let current = try store.indexSpecs(forSoup: "items")
        try store.alterSoup("items", indexes: current.count == 3 ? baseIndexes + [IndexSpec(path: "extra", type: .json1)] : baseIndexes)
    }
    _ = try store.upsert([["key": "counter", "round": .int(n), "items": .int(total)]], intoSoup: "counter", externalIdPath: "key")
    return total
}

let baseIndexes = [IndexSpec(path: "batch", type: .integer), IndexSpec(path: "name", type: .string), IndexSpec(path: "body", type: .fullText)]
do {
    let store = try SmartStore(fileURL: URL(fileURLWithPath: arguments[1]), key: key)
    if !store.soupExists("items") {
        try store.registerSoups([SoupSpec(name: "items", indexes: baseIndexes),
                                 SoupSpec(name: "counter", indexes: [IndexSpec(path: "key", type: .string)])])
    }
    let counterQuery = QuerySpec.exact(soupName: "counter", path: "key", matchKey: "counter")
    let counter = try store.query(counterQuery).first?.objectValue
    var round = counter?["round"]?.intValue ?? 0
    var items = counter?["items"]?.intValue ?? 0
    while true {
        round += 1
        let n = round
        if broken {
            items = try brokenRound(store, n, items)
            FileHandle.standardOutput.write(Data("committed \(n)\n".utf8))
            continue
        }
        items = try store.inTransaction { tx in
            var total = items
            let size = 1 + n % 23
            let batch: [[String: JSONValue]] = (0..<size).map { index in
                ["batch": .int(n), "name": .string("item-\(n)-\(index)"), "body": .string("entry \(index) of batch \(n) lorem ipsum"),
                 "extra": .int(index), "__local__": .bool(index % 2 == 0)]
            }
            try tx.upsert(batch, intoSoup: "items")
            total += size
            if n % 2 == 0 {
                // Remove the oldest batch still there, whole.
                let oldest = try tx.query(.smart("SELECT min({items:batch}) FROM {items}"))
                if let batch = oldest.first?[0]?.intValue {
                    let ids = try tx.query(.smart("SELECT {items:_soupEntryId} FROM {items} WHERE {items:batch} = ?", pageSize: 1_000), whereArgs: [.int(batch)])
                    total -= try tx.remove(ids.compactMap { $0[0]?.intValue }, fromSoup: "items")
                }
            }
            if n % 7 == 0 {
                let current = try tx.indexSpecs(forSoup: "items")
                try tx.alterSoup("items", indexes: current.count == 3 ? baseIndexes + [IndexSpec(path: "extra", type: .json1)] : baseIndexes)
            }
            try tx.upsert([["key": "counter", "round": .int(n), "items": .int(total)]], intoSoup: "counter", externalIdPath: "key")
            return total
        }
        FileHandle.standardOutput.write(Data("committed \(n)\n".utf8))
    }
} catch {
    fail(error)
}
