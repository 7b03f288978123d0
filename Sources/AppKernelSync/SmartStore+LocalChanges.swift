import Foundation
public import AppKernelCore
public import AppKernelStore

/// Local changes, marked the way MobileSync reads them: what an app does to records offline
/// before a sync up sends them (the Mobile SDK's sample apps set these fields by hand; here each
/// change is one call).
///
/// ```swift
/// try store.createLocally(["Name": "Initech"], inSoup: "Account", objectType: "Account")   // Id: local_…
/// try store.updateLocally(inSoup: "Account", recordId: "001…", fields: ["Industry": "Energy"])
/// try store.deleteLocally(inSoup: "Account", recordId: "001…")    // stays, marked, until synced up
/// let dirty = try store.locallyModified(soup: "Account")           // all three
/// ```
extension SmartStore {
    /// Creates a record locally: a local id (`local_…`) unless `fields` has one,
    /// `attributes.type`, and `__local__` / `__locally_created__` set.
    /// - Returns: The entry as stored.
    /// - Throws: `StoreError` (an unknown soup, …).
    @discardableResult
    public func createLocally(_ fields: [String: JSONValue], inSoup soup: String, objectType: String,
                              idFieldName: String = "Id") throws(StoreError) -> [String: JSONValue] {
        var record = fields
        if record[idFieldName]?.stringValue == nil { record[idFieldName] = .string(MobileSync.createLocalID()) }
        record["attributes"] = ["type": .string(objectType)]
        record[MobileSync.localField] = true
        record[MobileSync.locallyCreatedField] = true
        record[MobileSync.locallyUpdatedField] = false
        record[MobileSync.locallyDeletedField] = false
        return try upsert([record], intoSoup: soup).first ?? record
    }

    /// Changes a stored record's fields locally and marks it `__local__` /
    /// `__locally_updated__` (a record created locally stays marked created).
    /// - Returns: The entry as stored.
    /// - Throws: `StoreError` `unknownEntry` when the soup has no such entry.
    @discardableResult
    public func updateLocally(inSoup soup: String, soupEntryId: Int, fields: [String: JSONValue]) throws(StoreError) -> [String: JSONValue] {
        var record = try entry(soupEntryId, inSoup: soup)
        record.merge(fields) { _, new in new }
        record[MobileSync.localField] = true
        record[MobileSync.locallyUpdatedField] = true
        return try upsert([record], intoSoup: soup).first ?? record
    }

    /// `updateLocally(inSoup:soupEntryId:fields:)` for the record whose id field is `recordId`.
    @discardableResult
    public func updateLocally(inSoup soup: String, recordId: String, idFieldName: String = "Id",
                              fields: [String: JSONValue]) throws(StoreError) -> [String: JSONValue] {
        try updateLocally(inSoup: soup, soupEntryId: try entryID(of: recordId, idFieldName: idFieldName, inSoup: soup), fields: fields)
    }

    /// Marks a stored record deleted locally (`__local__` / `__locally_deleted__`): it stays in
    /// the soup until a sync up deletes it on the server (a record created locally is then just
    /// removed).
    /// - Throws: `StoreError` `unknownEntry` when the soup has no such entry.
    @discardableResult
    public func deleteLocally(inSoup soup: String, soupEntryId: Int) throws(StoreError) -> [String: JSONValue] {
        var record = try entry(soupEntryId, inSoup: soup)
        record[MobileSync.localField] = true
        record[MobileSync.locallyDeletedField] = true
        return try upsert([record], intoSoup: soup).first ?? record
    }

    /// `deleteLocally(inSoup:soupEntryId:)` for the record whose id field is `recordId`.
    @discardableResult
    public func deleteLocally(inSoup soup: String, recordId: String, idFieldName: String = "Id") throws(StoreError) -> [String: JSONValue] {
        try deleteLocally(inSoup: soup, soupEntryId: try entryID(of: recordId, idFieldName: idFieldName, inSoup: soup))
    }

    /// The soup's records with local changes (`__local__` true), in entry order.
    public func locallyModified(soup: String) throws(StoreError) -> [[String: JSONValue]] {
        let spec = QuerySpec.exact(soupName: soup, path: MobileSync.localField, matchKey: true, orderPath: "_soupEntryId", pageSize: MobileSync.pageSize)
        var records: [[String: JSONValue]] = []
        for pageIndex in 0... {
            let page = try query(spec, pageIndex: pageIndex)
            records += page.compactMap(\.objectValue)
            if page.count < MobileSync.pageSize { break }
        }
        return records
    }

    private func entry(_ id: Int, inSoup soup: String) throws(StoreError) -> [String: JSONValue] {
        guard let record = try retrieve([id], fromSoup: soup).first else {
            throw StoreError(code: .unknownEntry, reason: "the soup has no entry \(id)", file: fileURL.path, soup: soup, path: "_soupEntryId")
        }
        return record
    }

    private func entryID(of recordId: String, idFieldName: String, inSoup soup: String) throws(StoreError) -> Int {
        let rows = try query(.exact(soupName: soup, path: idFieldName, matchKey: .string(recordId), selectPaths: ["_soupEntryId"], pageSize: 1))
        guard let id = rows.first?[0]?.intValue else {
            throw StoreError(code: .unknownEntry, reason: "no entry has \(idFieldName) \(recordId)", file: fileURL.path, soup: soup, path: idFieldName)
        }
        return id
    }
}
