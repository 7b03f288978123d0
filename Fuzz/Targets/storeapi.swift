// libFuzzer target: SmartStore's public API with hostile arguments. The first 17 bytes choose a
// query (its type, page size and page index, any Int); the rest is JSON upserted as entries and,
// as text, used as a path, a key and Smart SQL. Every call must return or throw a StoreError:
// no trap (arithmetic overflow, stack overflow), no hang (the step budget ends every query).
// Built and run by .ci/fuzz.
import AppKernelCore
import AppKernelStore
import Foundation

/// One store for the whole run, in a fresh temporary directory, with a small step budget.
let store: SmartStore = {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("fuzz-storeapi-\(getpid())")
    try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    do {
        let store = try SmartStore(fileURL: directory.appendingPathComponent("store.sqlite"),
                                   configuration: SmartStore.Configuration(queryStepBudget: 200_000))
        try store.registerSoup(SoupSpec(name: "s", indexes: [IndexSpec(path: "a", type: .string), IndexSpec(path: "b.c", type: .integer),
                                                             IndexSpec(path: "t", type: .fullText)]))
        return store
    } catch {
        fatalError("cannot open the fuzz store: \(error)")
    }
}()
// libFuzzer calls the target on one thread only.
nonisolated(unsafe) var inputs = 0

private func integer(_ bytes: ArraySlice<UInt8>) -> Int {
    bytes.reduce(0) { ($0 << 8) | Int($1) }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: count))
    guard bytes.count >= 17 else { return 0 }
    inputs += 1
    if inputs % 500 == 0 { try? store.clearSoup("s") }
    let pageSize = integer(bytes[1..<9])
    let pageIndex = integer(bytes[9..<17])
    let rest = Array(bytes[17...])
    let text = String(decoding: rest, as: UTF8.self)
    let value = try? JSONValue(jsonData: Data(rest))
    var entries: [JSONValue] = []
    if case .array(let elements)? = value { entries = elements } else if let value { entries = [value] }
    do { _ = try store.upsert(entries, intoSoup: "s") } catch { _ = error.code }
    do { _ = try store.upsert(entries, intoSoup: "s", externalIdPath: "a") } catch { _ = error.code }
    let key = value ?? .string(text)
    let specs: [QuerySpec] = switch bytes[0] % 6 {
    case 0: [.all(soupName: "s", orderPath: text, pageSize: pageSize)]
    case 1: [.exact(soupName: "s", path: "a", matchKey: key, pageSize: pageSize), .exact(soupName: "s", path: text, matchKey: key, pageSize: pageSize)]
    case 2: [.range(soupName: "s", path: "b.c", beginKey: key, endKey: nil, pageSize: pageSize)]
    case 3: [.like(soupName: "s", path: "a", likeKey: text, pageSize: pageSize)]
    case 4: [.match(soupName: "s", path: "t", matchKey: text, pageSize: pageSize)]
    default: [.smart(text, pageSize: pageSize)]
    }
    let arguments: [JSONValue] = if case .array(let elements)? = value { elements } else { [] }
    for spec in specs {
        do { _ = try store.query(spec, pageIndex: pageIndex) } catch { _ = error.code }
        do { _ = try store.query(spec, pageIndex: pageIndex, whereArgs: arguments) } catch { _ = error.code }
        do { _ = try store.count(spec) } catch { _ = error.code }
    }
    return 0
}
