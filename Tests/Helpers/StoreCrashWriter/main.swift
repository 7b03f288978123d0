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
import AppKernelCore
import AppKernelStore
import Foundation

guard CommandLine.arguments.count == 2 else {
    FileHandle.standardError.write(Data("usage: StoreCrashWriter <database file>\n".utf8))
    exit(2)
}

func fail(_ error: any Error) -> Never {
    FileHandle.standardError.write(Data("\(error)\n".utf8))
    exit(1)
}

let baseIndexes = [IndexSpec(path: "batch", type: .integer), IndexSpec(path: "name", type: .string), IndexSpec(path: "body", type: .fullText)]
do {
    let store = try SmartStore(fileURL: URL(fileURLWithPath: CommandLine.arguments[1]))
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
