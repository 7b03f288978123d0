// Part of the listener table, AppKernel's hot path: see ListenerTable.swift for the rules these
// files (and only these) follow — unchecked exclusivity, unmanaged references — and why.

// MARK: - Handlers

/// What a listener list calls. Subclasses carry the closure with its exact type, so delivery
/// needs no existential casts.
@MainActor
@usableFromInline package class ListenerHandler {
    package init() {}
}

/// A listener receiving one payload type.
@MainActor
@usableFromInline package final class PayloadHandler<Payload>: ListenerHandler {
    /// The listener's closure.
    @usableFromInline package let call: @MainActor (Payload) -> Void
    /// Wraps a closure.
    package init(_ call: @escaping @MainActor (Payload) -> Void) {
        self.call = call
        super.init()
    }
}

// MARK: - One registration

/// A registered listener, held by its list and by its token.
///
/// The entry holds its handler by hand: one retain taken at registration, released when the entry
/// is cancelled. The list calls the handler through that reference without retaining it per call.
/// Safety: while a call is in progress (`callsInProgress > 0`) a cancellation — the listener
/// cancelling or dropping its own token, say — only marks the entry; the handler is released when
/// the last call returns, never under a running closure.
///
/// `@unchecked Sendable`: only touched on the main actor (by its list, and by its token, whose
/// deinit is main-actor isolated). The stored properties are `@exclusivity(unchecked)`: no access
/// to them spans a call that could reach them again — the counter is updated around the call, not
/// during it, and `handler` is read into a local before the call.
///
/// 33 bytes of instance (a 48-byte heap block): the counter and the position are 32-bit so that
/// the position costs no extra block size.
@usableFromInline package final class ListenerEntry: @unchecked Sendable {
    #if APPKERNEL_CHECKED_EXCLUSIVITY
    @usableFromInline var handler: Unmanaged<ListenerHandler>?
    @usableFromInline var callsInProgress: Int32 = 0
    /// Where the entry is in its list's `entries` (the list's compaction keeps it true).
    @usableFromInline var position: Int32
    /// Whether the token was cancelled or dropped.
    @usableFromInline package internal(set) var isCancelled = false
    #else
    @exclusivity(unchecked) @usableFromInline var handler: Unmanaged<ListenerHandler>?
    @exclusivity(unchecked) @usableFromInline var callsInProgress: Int32 = 0
    /// Where the entry is in its list's `entries` (the list's compaction keeps it true).
    @exclusivity(unchecked) @usableFromInline var position: Int32
    /// Whether the token was cancelled or dropped.
    @exclusivity(unchecked) @usableFromInline package internal(set) var isCancelled = false
    #endif

    package init(handler: ListenerHandler, position: Int32) {
        self.handler = .passRetained(handler)
        self.position = position
    }

    /// Calls `body` with the handler, unless the entry has been cancelled.
    /// - Returns: `false` when cancelled (the caller prunes the entry).
    @inlinable @inline(__always)
    func withHandler(_ body: (ListenerHandler) -> Void) -> Bool {
        guard !isCancelled, let handler else { return false }
        callsInProgress &+= 1
        handler._withUnsafeGuaranteedRef(body)
        callsInProgress &-= 1
        if isCancelled, callsInProgress == 0 { releaseHandler() }
        return true
    }

    /// Stops delivery; frees the handler now, or when the running call returns.
    @usableFromInline
    func cancel() {
        guard !isCancelled else { return }
        isCancelled = true
        if callsInProgress == 0 { releaseHandler() }
    }

    @usableFromInline
    func releaseHandler() {
        // Cleared before the release: what the closure captured may run code (a deinit) that
        // reaches this entry again.
        let released = handler
        handler = nil
        released?.release()
    }

    deinit {
        handler?.release()
    }
}

// MARK: - A list

/// The listeners of one event (or of every event, or an observer list), in registration order.
///
/// Adding is O(1) amortised; so is cancelling. A cancelled entry leaves its slot at once (the
/// entry knows its position), so a cancellation touches only the entry and its token — both
/// already in cache — and the list's slot. Emptied slots are squeezed out when they outnumber the
/// live entries, or after a delivery that met them: a pass over the slots (dense pointers) that
/// moves each live entry down, rewriting its position only when a hole lies before it, and reads
/// an entry's flag (and releases it) only for entries marked during a delivery. Cancelling N
/// listeners one by one costs O(N), not O(N²).
///
/// Delivery works on a snapshot (the array, shared): listeners added during a delivery hear the
/// next one; a listener cancelled during a delivery hears nothing more, at once. While a delivery
/// is under way a cancellation only marks its entry — emptying the slot would copy the shared
/// array — and the compaction after the delivery removes the marked entries.
@usableFromInline package final class ListenerList: @unchecked Sendable {
    // `@unchecked Sendable` and `@exclusivity(unchecked)`: only touched on the main actor (checked
    // in debug builds); every access below is instantaneous (a read, a copy, an append, an
    // assignment that releases an entry its token still holds) or the compaction, whose loop
    // works on the storage through a buffer and runs no code but a release of marked entries
    // (their handlers already released, so their deinit runs nothing) — listener closures always
    // run on a snapshot, outside any access.
    #if APPKERNEL_CHECKED_EXCLUSIVITY
    @usableFromInline var entries: [ListenerEntry?] = []
    @usableFromInline var cancelledCount = 0
    @usableFromInline var markedCount = 0
    @usableFromInline var deliveries = 0
    @usableFromInline var base: Int32 = 0
    #else
    /// The entries in registration order; `nil` where a cancelled entry left.
    @exclusivity(unchecked) @usableFromInline var entries: [ListenerEntry?] = []
    /// Slots of `entries` whose entry was cancelled: emptied slots and marked entries.
    @exclusivity(unchecked) @usableFromInline var cancelledCount = 0
    /// Entries cancelled during a delivery: still in their slots, marked.
    @exclusivity(unchecked) @usableFromInline var markedCount = 0
    /// Deliveries of this list under way (each holds a snapshot sharing `entries`' storage).
    @exclusivity(unchecked) @usableFromInline var deliveries = 0
    /// The position of `entries[0]`: an entry's slot is `position − base` (wrapping 32-bit
    /// arithmetic, so the positions may wrap in a process that registers billions of listeners).
    @exclusivity(unchecked) @usableFromInline var base: Int32 = 0
    #endif

    /// An empty list.
    package init() {}

    /// Whether no live listener is registered.
    @inlinable package var isEmpty: Bool { entries.count == cancelledCount }

    /// The number of live listeners.
    package var count: Int { entries.count - cancelledCount }

    /// Registers `handler`; the token ends the registration.
    @MainActor
    package func add(_ handler: ListenerHandler) -> ListenerToken {
        checkIsolation()
        let entry = ListenerEntry(handler: handler, position: base &+ Int32(entries.count))
        entries.append(entry)
        // The token holds the list strongly: a weak reference would give the list a side table and
        // make every retain of it slower. The list does not hold the token, so nothing cycles.
        return ListenerToken(registration: entry, registrar: self)
    }

    /// Registers a closure receiving `Payload`.
    @MainActor
    package func add<Payload>(_ handler: @escaping @MainActor (Payload) -> Void) -> ListenerToken {
        add(PayloadHandler(handler))
    }

    /// Delivers `payload` to every live listener of a snapshot. Every handler must be a
    /// `PayloadHandler<Payload>` — the list's owner guarantees it (one payload type per list);
    /// debug builds check it.
    @inlinable @MainActor
    package func deliver<Payload>(_ payload: Payload) {
        forEach { handler in
            #if DEBUG
            precondition(handler is PayloadHandler<Payload>, "a listener list holds one payload type")
            #endif
            unsafeDowncast(handler, to: PayloadHandler<Payload>.self).call(payload)
        }
    }

    /// Calls `body` with each live handler of a snapshot; compacts the list afterwards if the
    /// delivery met or marked a cancelled entry (the compaction costs what the delivery did).
    @inlinable
    package func forEach(_ body: (ListenerHandler) -> Void) {
        let snapshot = entries
        guard !snapshot.isEmpty else { return }
        checkIsolation()
        deliveries &+= 1
        let sawCancelled = Self.deliver(to: snapshot, body)
        deliveries &-= 1
        // Marked entries are pruned even when the loop had passed them before they were cancelled.
        if deliveries == 0, sawCancelled || markedCount > 0 { pruneCancelled() }
    }

    /// The loop. `entries` keeps every entry alive until it ends, so each is read as an
    /// unretained reference: no retain and release per listener.
    @inlinable
    static func deliver(to entries: [ListenerEntry?], _ body: (ListenerHandler) -> Void) -> Bool {
        var sawCancelled = false
        entries.withUnsafeBufferPointer { buffer in
            // `Unmanaged<ListenerEntry>?` has the layout of `ListenerEntry?` (one pointer, nil is
            // zero); reading it neither retains nor releases.
            buffer.withMemoryRebound(to: Unmanaged<ListenerEntry>?.self) { entries in
                for index in entries.indices {
                    guard let entry = entries[index], entry._withUnsafeGuaranteedRef({ $0.withHandler(body) }) else {
                        sawCancelled = true
                        continue
                    }
                }
            }
        }
        return sawCancelled
    }

    /// Takes a cancelled entry out: empties its slot (or, during a delivery, counts it as
    /// marked) and compacts once cancelled slots outnumber live entries.
    @usableFromInline
    func remove(_ entry: ListenerEntry) {
        cancelledCount += 1
        guard deliveries == 0 else {
            markedCount += 1
            return
        }
        // Its token still holds the entry, so emptying the slot frees nothing and runs no code.
        entries[Int(entry.position &- base)] = nil
        if cancelledCount > 8, cancelledCount * 2 > entries.count { pruneCancelled() }
    }

    /// Squeezes out emptied slots and marked entries, keeping registration order. The emptied
    /// slots before the first entry only move `base`: an entry is written to (its position) only
    /// when an emptied slot or a marked entry lies between it and that first entry, so the
    /// common orders — oldest first, newest first — rewrite no entry at all.
    @usableFromInline
    func pruneCancelled() {
        #if DEBUG
        ListenerList.elementsMoved += entries.count
        #endif
        let checkMarks = markedCount > 0
        var kept = 0
        var newBase = base
        entries.withUnsafeMutableBufferPointer { buffer in
            buffer.withMemoryRebound(to: Unmanaged<ListenerEntry>?.self) { slots in
                var leading = 0
                while leading < slots.count, slots[leading] == nil { leading += 1 }
                newBase = base &+ Int32(truncatingIfNeeded: leading)
                for index in leading..<slots.count {
                    guard let slot = slots[index] else { continue }
                    if checkMarks, slot._withUnsafeGuaranteedRef({ $0.isCancelled }) {
                        // A marked entry: its handler is released (no delivery is under way, so
                        // no call is), so releasing the list's reference runs no code.
                        slots[index] = nil
                        slot.release()
                        continue
                    }
                    if kept != index {
                        slots[kept] = slot
                        slots[index] = nil
                        if index - leading != kept {
                            slot._withUnsafeGuaranteedRef { $0.position = newBase &+ Int32(truncatingIfNeeded: kept) }
                        }
                    }
                    kept += 1
                }
            }
        }
        entries.removeSubrange(kept...)
        base = newBase
        cancelledCount = 0
        markedCount = 0
    }

    /// Checks, in debug builds, that the caller is on the main actor.
    @inlinable @inline(__always)
    func checkIsolation() {
        #if DEBUG
        MainActor.assertIsolated("listener lists are main-actor state")
        #endif
    }

    #if DEBUG
    /// Entries moved by compaction so far, all lists together (debug builds; complexity tests).
    nonisolated(unsafe) package static var elementsMoved = 0
    #endif
}

extension ListenerList: Registrar {
    /// A token was cancelled: stop its entry and count it. The registration is always a
    /// `ListenerEntry`: `add(_:)` makes every token of this list.
    package nonisolated func cancelRegistration(_ registration: AnyObject?) {
        guard let registration else { return }
        let entry = unsafeDowncast(registration, to: ListenerEntry.self)
        guard !entry.isCancelled else { return }
        // The list first, then the entry: releasing the handler may run code (what the closure
        // captured) that reaches this list again, and finds it consistent.
        remove(entry)
        entry.cancel()
    }
}
