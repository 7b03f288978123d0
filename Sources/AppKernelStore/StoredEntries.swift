public import AppKernelCore

/// The entries an upsert or a create stored, in the order given: each as it was given plus the
/// `_soupEntryId` and `_soupLastModifiedDate` the store gave it — what the SDK's
/// `upsertEntries:` returns. Each element is built when read (a caller that keeps only the ids,
/// or nothing, pays nothing for whole entries); ``soupEntryIds`` has the ids alone.
///
/// ```swift
/// let saved = try store.upsert(records, intoSoup: "accounts")
/// saved[0]["_soupEntryId"]     // .int(1)
/// saved.soupEntryIds           // [1, 2, …]
/// Array(saved)                 // [[String: JSONValue]]
/// ```
public struct StoredEntries: RandomAccessCollection, Sendable, Hashable, CustomStringConvertible {
    private let entries: [[String: JSONValue]]
    /// Each entry's `_soupEntryId`, in order.
    public let soupEntryIds: [Int]
    /// The `_soupLastModifiedDate` they were all stored with (milliseconds since 1970): one write,
    /// one time.
    public let lastModifiedDate: Int

    init(entries: [[String: JSONValue]], soupEntryIds: [Int], lastModifiedDate: Int) {
        self.entries = entries
        self.soupEntryIds = soupEntryIds
        self.lastModifiedDate = lastModifiedDate
    }

    /// 0.
    public var startIndex: Int { 0 }
    /// The number of entries.
    public var endIndex: Int { entries.count }

    /// The entry at `position`, as stored.
    public subscript(position: Int) -> [String: JSONValue] {
        var entry = entries[position]
        entry[SoupColumns.entryIDPath] = .int(soupEntryIds[position])
        entry[SoupColumns.lastModifiedPath] = .int(lastModifiedDate)
        return entry
    }

    /// The entries as a JSON array.
    public var description: String { JSONValue.array(map(JSONValue.object)).description }
}
