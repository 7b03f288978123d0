/// One registered hook; its token marks it cancelled.
final class HookEntry<Payload> {
    let id: Int
    let priority: Int
    let label: String?
    /// The registration site, for a hook without a label (`#fileID` literals: no allocation).
    let fileID: String
    let line: Int
    let stage: HookError.Stage
    let body: @MainActor (Payload) throws -> HookResult
    var isCancelled = false

    init(id: Int, priority: Int, label: String?, fileID: String, line: Int, stage: HookError.Stage,
         body: @escaping @MainActor (Payload) throws -> HookResult) {
        self.id = id
        self.priority = priority
        self.label = label
        self.fileID = fileID
        self.line = line
        self.stage = stage
        self.body = body
    }

    /// The label, or the registration site (`File.swift:12`) — built when asked for (errors,
    /// slow-hook reports, listings), never at registration.
    var name: String {
        label ?? "\(fileID.split(separator: "/").last.map(String.init) ?? fileID):\(line)"
    }
}

/// The hooks of one stage of one point. Registering is amortised O(1): an append, which only
/// marks the list unsorted when the new hook outranks the last one. Cancelling is O(1): a mark
/// and a count. The list is put in run order — cancelled hooks dropped, then (if needed) sorted
/// by priority, higher first, then registration — when a dispatch takes its snapshot, work that
/// the dispatch's own pass over the hooks already pays for; it is also compacted as soon as
/// cancelled hooks outnumber live ones, so memory follows the live count.
///
/// Compacting never frees an entry itself: it hands the entries it dropped back to the chain,
/// which lets them go once its access to the list has ended (see ``HookChain``).
struct HookStageList<Payload> {
    private var entries: [HookEntry<Payload>] = []
    private var cancelled = 0
    private var sorted = true

    var liveCount: Int { entries.count - cancelled }
    var hasCancelled: Bool { cancelled > 0 }

    mutating func insert(_ entry: HookEntry<Payload>) {
        if let last = entries.last, last.priority < entry.priority { sorted = false }
        entries.append(entry)
    }

    /// Counts a cancelled entry; compacts once cancelled entries outnumber live ones.
    /// - Returns: What the caller must release after its access ends (see ``compact()``).
    mutating func noteCancelled() -> [HookEntry<Payload>] {
        cancelled += 1
        return cancelled > 8 && cancelled * 2 > entries.count ? compact() : []
    }

    /// The live hooks in run order. Compact first (``compact()``): this only sorts.
    mutating func snapshot() -> [HookEntry<Payload>] {
        precondition(cancelled == 0, "HookStageList: compact before taking a snapshot")
        if !sorted {
            entries.sort { $0.priority != $1.priority ? $0.priority > $1.priority : $0.id < $1.id }
            sorted = true
            #if DEBUG
            HookStageCounters.sorts += 1
            #endif
        }
        return entries
    }

    /// Drops the cancelled entries.
    /// - Returns: The entries as they were, cancelled ones included: the caller releases them
    ///   after its access to the list has ended, since freeing an entry frees its hook's closure,
    ///   whose captures may include a token of this very chain (see ``HookChain``).
    mutating func compact() -> [HookEntry<Payload>] {
        #if DEBUG
        HookStageCounters.elementsMoved += entries.count
        #endif
        let old = entries
        entries = old.filter { !$0.isCancelled }
        cancelled = 0
        return old
    }
}

#if DEBUG
/// Entries moved by compaction, and sorts, so far — every ``HookStageList`` together (debug
/// builds; complexity tests).
enum HookStageCounters {
    nonisolated(unsafe) static var elementsMoved = 0
    nonisolated(unsafe) static var sorts = 0
}
#endif

