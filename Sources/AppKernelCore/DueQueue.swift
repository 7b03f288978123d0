/// Items ordered by when they are due — the queue behind the test clock's timers and the
/// kernel's deadline queue. Each item is a key (an instant, an uptime), a value (what is due;
/// `Void` for owners that keep it elsewhere) and a unique identifier, which breaks ties: of two
/// items with equal keys, the one inserted first must have the smaller identifier (identifiers
/// that grow with every insertion always do; so do unique keys used as their own identifiers).
///
/// Items inserted in due order — the usual case: the same delay after a clock that only moves
/// forward — go to a FIFO run, O(1) in and out; an item due earlier than the run's last goes to a
/// binary heap, O(log n). The earliest item is the earlier of the two fronts. Removal is the
/// owner's: it passes `isLive` (which may look at the item's value — a value that knows whether
/// it is still wanted spares the owner a lookup per item), and dead items are dropped as they
/// reach a front (or all at once by ``compact(isLiveItem:)``).
///
/// `package`, not an API: only the kernel and the testing module use it. The type is
/// `@usableFromInline` and its members `@inlinable` so that they can specialise it (see
/// ListenerTable.swift).
@usableFromInline package struct DueQueue<Key: Comparable, Value> {
    /// One item.
    @usableFromInline package typealias Item = (key: Key, id: Int, value: Value)

    @usableFromInline var run: [Item] = []
    @usableFromInline var head = 0
    @usableFromInline var heap: [Item] = []

    /// An empty queue.
    @inlinable package init() {}

    /// Items held, dead ones included until dropped.
    @inlinable package var count: Int { run.count - head + heap.count }

    /// Adds an item (see the type's rule for identifiers).
    @inlinable package mutating func insert(_ key: Key, id: Int, value: Value) {
        if head == run.count || !(key < run[run.count - 1].key) {
            run.append((key, id, value))
        } else {
            heap.append((key, id, value))
            siftUp(heap.count - 1)
        }
    }

    /// The earliest live item, dropping dead ones from the fronts.
    @inlinable package mutating func first(isLiveItem isLive: (Item) -> Bool) -> Item? {
        while head < run.count, !isLive(run[head]) { advanceRun() }
        while let top = heap.first, !isLive(top) { popHeap() }
        switch (head < run.count ? run[head] : nil, heap.first) {
        case (nil, nil): return nil
        case (let item?, nil), (nil, let item?): return item
        case (let fromRun?, let fromHeap?): return Self.precedes(fromHeap, fromRun) ? fromHeap : fromRun
        }
    }

    /// Removes the item ``first(isLiveItem:)`` returned.
    @inlinable package mutating func removeFirst(_ item: Item) {
        if head < run.count, run[head].id == item.id { advanceRun() } else { popHeap() }
    }

    /// Drops every dead item at once (O(n)).
    @inlinable package mutating func compact(isLiveItem isLive: (Item) -> Bool) {
        run.removeSubrange(0..<head)
        head = 0
        run.removeAll { !isLive($0) }
        heap.removeAll { !isLive($0) }
        for index in stride(from: heap.count / 2 - 1, through: 0, by: -1) { siftDown(index) }
    }

    /// Every item held (dead ones included until dropped), in no particular order.
    @inlinable package var items: [Item] { Array(run[head...]) + heap }

    /// Empties the queue.
    @inlinable package mutating func removeAll() {
        run.removeAll(keepingCapacity: true)
        head = 0
        heap.removeAll(keepingCapacity: true)
    }

    @inlinable static func precedes(_ lhs: Item, _ rhs: Item) -> Bool {
        lhs.key < rhs.key || (lhs.key == rhs.key && lhs.id < rhs.id)
    }

    @inlinable mutating func advanceRun() {
        head += 1
        if head == run.count {
            run.removeAll(keepingCapacity: true)
            head = 0
        } else if head > 64, head * 2 > run.count {
            run.removeSubrange(0..<head)
            head = 0
        }
    }

    @inlinable mutating func siftUp(_ start: Int) {
        var child = start
        while child > 0 {
            let parent = (child - 1) / 2
            guard Self.precedes(heap[child], heap[parent]) else { return }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    @inlinable mutating func popHeap() {
        let last = heap.removeLast()
        guard !heap.isEmpty else { return }
        heap[0] = last
        siftDown(0)
    }

    @inlinable mutating func siftDown(_ start: Int) {
        var parent = start
        while true {
            let left = 2 * parent + 1, right = left + 1
            var first = parent
            if left < heap.count, Self.precedes(heap[left], heap[first]) { first = left }
            if right < heap.count, Self.precedes(heap[right], heap[first]) { first = right }
            guard first != parent else { return }
            heap.swapAt(parent, first)
            parent = first
        }
    }
}

/// Owners that keep what is due themselves: items are a key and an identifier.
extension DueQueue where Value == Void {
    /// Adds an item (see the type's rule for identifiers).
    @inlinable package mutating func insert(_ key: Key, id: Int) {
        insert(key, id: id, value: ())
    }

    /// The earliest live item, dropping dead ones from the fronts.
    @inlinable package mutating func first(isLive: (Int) -> Bool) -> Item? {
        first(isLiveItem: { item in isLive(item.id) })
    }

    /// Drops every dead item at once (O(n)).
    @inlinable package mutating func compact(isLive: (Int) -> Bool) {
        compact(isLiveItem: { item in isLive(item.id) })
    }
}
