import AppKernelCore

/// `stop` / `restart` (SFMobileSyncSyncManager): a stopped manager starts no sync; the syncs it
/// was running end `STOPPED` after their current page (sync down) or batch (sync up), and a
/// restart may run them again, resuming where they stopped.
extension SyncManager {
    /// Whether the manager takes new syncs, and which run.
    struct Activity: Sendable {
        /// The manager's state (`SFSyncManagerState`).
        enum State: String, Sendable {
            case accepting = "accepting syncs"
            case stopRequested = "stopping"
            case stopped
        }

        var running: Set<Int> = []
        var state = State.accepting
    }

    /// Stops the manager (`stop`): no sync starts until ``restart(restartStoppedSyncs:onUpdate:)``
    /// (``SyncError/Code/managerStopped``); each running sync ends after its current page or
    /// batch, saved `STOPPED`, its call throwing ``SyncError/Code/stopped``. The manager is
    /// ``isStopping`` until the last has ended, then ``isStopped``.
    public func stop() {
        activity.withLock { $0.state = $0.running.isEmpty ? .stopped : .stopRequested }
    }

    /// Whether ``stop()`` was called and a sync is still ending (`isStopping`).
    public var isStopping: Bool { activity.withLock { $0.state == .stopRequested } }

    /// Whether the manager is stopped and no sync runs (`isStopped`).
    public var isStopped: Bool { activity.withLock { $0.state == .stopped } }

    /// Takes syncs again after ``stop()`` (`restart:updateBlock:`); with `restartStoppedSyncs`,
    /// runs again every sync saved `STOPPED` (one after the other, each resuming where it
    /// stopped — its own failure does not keep the others from running).
    /// - Returns: The restarted syncs' states once run (a failed one as saved, `FAILED`).
    /// - Throws: ``SyncError`` `managerNotStopped` when the manager was neither stopped nor
    ///   stopping; `storeFailed` when the stopped syncs cannot be read.
    @discardableResult
    public func restart(restartStoppedSyncs: Bool = false, onUpdate: SyncUpdateBlock? = nil) async throws(SyncError) -> [SyncState] {
        let wasStopped = activity.withLock { activity in
            guard activity.state != .accepting else { return false }
            activity.state = .accepting
            return true
        }
        guard wasStopped else {
            throw SyncError(code: .managerNotStopped, reason: "restart() on a sync manager that is accepting syncs: stop() it first")
        }
        guard restartStoppedSyncs else { return [] }
        var states: [SyncState] = []
        for sync in try syncs(withStatus: .stopped) {
            do throws(SyncError) {
                states.append(try await reSync(id: sync.id, onUpdate: onUpdate))
            } catch {
                if let saved = try syncStatus(forId: sync.id) { states.append(saved) }
            }
        }
        return states
    }

    /// Throws ``SyncError/Code/stopped`` when ``stop()`` was called (`shouldStop`): the run
    /// ends, saved `STOPPED`, after what it wrote.
    func checkNotStopping(_ sync: SyncState) throws(SyncError) {
        guard activity.withLock({ $0.state != .accepting }) else { return }
        throw SyncError(code: .stopped, reason: "the sync manager was stopped: the sync stopped after its last whole page or batch; "
                            + "restart(restartStoppedSyncs: true) resumes it", sync: sync.label)
    }
}
