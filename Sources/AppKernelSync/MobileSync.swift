import Foundation
import AppKernelStore

/// MobileSync's names: the fields it adds to soup entries and the soup it keeps syncs in, as the
/// Mobile SDK spells them, so entries and sync states read the same on both sides.
///
/// An entry changed locally carries `__local__: true` and one of `__locally_created__`,
/// `__locally_updated__`, `__locally_deleted__`; a sync down writes them all `false`. A sync up
/// that the server refuses for one record leaves that record dirty with the server's error in
/// `__last_error__`; a sync down stamps each record with the sync's id in `__sync_id__`.
public enum MobileSync {
    /// `__local__`: the entry has local changes not yet synced up.
    public static let localField = "__local__"
    /// `__locally_created__`: the entry was created locally.
    public static let locallyCreatedField = "__locally_created__"
    /// `__locally_updated__`: the entry was changed locally.
    public static let locallyUpdatedField = "__locally_updated__"
    /// `__locally_deleted__`: the entry was deleted locally (it stays until synced up).
    public static let locallyDeletedField = "__locally_deleted__"
    /// `__sync_id__`: the id of the sync down that last wrote the entry.
    public static let syncIDField = "__sync_id__"
    /// `__last_error__`: the server's error (its JSON text) from the last sync up that failed
    /// for this entry.
    public static let lastErrorField = "__last_error__"

    /// `syncs_soup`: where sync states are kept, one entry a sync.
    public static let syncsSoupName = "syncs_soup"

    /// The prefix of ids given to records created locally (`local_123456789`).
    public static let localIDPrefix = "local_"

    /// The records a SOQL page or a local query holds at most (the SDK's page size).
    static let pageSize = 2000

    /// Whether an id was made locally (``localIDPrefix``), not by the server.
    public static func isLocalID(_ id: String) -> Bool { id.hasPrefix(localIDPrefix) }

    /// A new local id: `local_` and nine digits.
    public static func createLocalID() -> String {
        localIDPrefix + String(format: "%09d", Int.random(in: 0..<1_000_000_000))
    }
}
