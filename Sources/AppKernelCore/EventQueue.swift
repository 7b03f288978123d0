// Part of the listener table, AppKernel's hot path: see ListenerTable.swift for the rules these
// files (and only these) follow — unchecked exclusivity, unmanaged references — and why.

/// A FIFO: the application's events raised while another is being delivered (with the flag that
/// says a delivery is under way), and the services waiting for a worker. Enqueue and dequeue are
/// O(1) amortised (a head index, compacted when the consumed part passes half the storage).
@usableFromInline package final class EventQueue<Event>: @unchecked Sendable {
    // Main actor only; every access is instantaneous (reads, assignments, an append).
    #if APPKERNEL_CHECKED_EXCLUSIVITY
    @usableFromInline var storage: [Event?] = []
    @usableFromInline var head = 0
    /// Whether an event is being delivered; events raised meanwhile wait in the queue.
    @usableFromInline package var isDispatching = false
    #else
    @exclusivity(unchecked) @usableFromInline var storage: [Event?] = []
    @exclusivity(unchecked) @usableFromInline var head = 0
    /// Whether an event is being delivered; events raised meanwhile wait in the queue.
    @exclusivity(unchecked) @usableFromInline package var isDispatching = false
    #endif

    /// An empty queue.
    package init() {}

    /// Whether nothing waits.
    @inlinable package var isEmpty: Bool { head == storage.count }

    /// The event `offset` places behind the oldest (`0`: the oldest), left in the queue; `nil`
    /// past the newest.
    @inlinable package func peek(_ offset: Int) -> Event? {
        head + offset < storage.count ? storage[head + offset] : nil
    }

    /// Appends `event`.
    @inlinable package func enqueue(_ event: Event) {
        storage.append(event)
    }

    /// Takes the oldest event, if any.
    @inlinable package func dequeue() -> Event? {
        guard head < storage.count else {
            if head > 0 { storage.removeAll(keepingCapacity: true); head = 0 }
            return nil
        }
        let event = storage[head].take()
        head += 1
        if head > 64, head * 2 > storage.count { compact() }
        return event
    }

    /// Drops the consumed part once it passes half the storage: each event is moved at most
    /// once per halving, so a burst of k events costs O(k) moves.
    @usableFromInline
    func compact() {
        #if DEBUG
        EventQueueCounters.elementsMoved += storage.count - head
        #endif
        storage.removeFirst(head)
        head = 0
    }
}

#if DEBUG
/// Elements moved by the event queues' compactions so far, all queues together (debug builds;
/// complexity tests).
package enum EventQueueCounters {
    nonisolated(unsafe) package static var elementsMoved = 0
}
#endif

