// libFuzzer target: the Smart SQL translator — any text against a fixed catalog of two soups
// (one with a full-text index). A translation ends in SQL or a StoreError: a trap, a hang or
// unbounded memory is a bug. Built and run by .ci/fuzz.
@testable import AppKernelStore
import Foundation

let catalog: SoupCatalog = [
    "accounts": SoupInfo(name: "accounts", tableName: "TABLE_1", indexes: [
        SoupIndex(path: "Id", type: .string, columnName: "TABLE_1_0"),
        SoupIndex(path: "Name", type: .fullText, columnName: "TABLE_1_1"),
        SoupIndex(path: "Owner.Name", type: .string, columnName: "TABLE_1_2"),
        SoupIndex(path: "amount", type: .floating, columnName: "TABLE_1_3"),
        SoupIndex(path: "extra", type: .json1, columnName: "json_extract(soup, '$.extra')"),
    ]),
    "contacts": SoupInfo(name: "contacts", tableName: "TABLE_2", indexes: [
        SoupIndex(path: "AccountId", type: .string, columnName: "TABLE_2_0"),
        SoupIndex(path: "age", type: .integer, columnName: "TABLE_2_1"),
    ]),
]

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: count), as: UTF8.self)
    _ = try? SmartSqlTranslator.translate(text, catalog: catalog, file: nil)
    return 0
}
