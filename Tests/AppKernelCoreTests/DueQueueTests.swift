import Testing
import AppKernelCore

struct DueQueueTests {
    /// Pops everything live, earliest first.
    func drain(_ queue: inout DueQueue<Int, Void>, live: Set<Int>) -> [Int] {
        var popped: [Int] = []
        while let first = queue.first(isLive: { live.contains($0) }) {
            queue.removeFirst(first)
            popped.append(first.id)
        }
        return popped
    }

    @Test func inOrderAndOutOfOrderInsertsComeOutByKeyThenInsertion() {
        var queue = DueQueue<Int, Void>()
        // (key, id): in order, a tie, then earlier ones that go to the heap.
        let items = [(10, 1), (20, 2), (20, 3), (30, 4), (5, 5), (25, 6), (20, 7), (40, 8), (5, 9)]
        for (key, id) in items { queue.insert(key, id: id) }
        #expect(queue.count == items.count)
        let expected = items.sorted { $0.0 != $1.0 ? $0.0 < $1.0 : $0.1 < $1.1 }.map(\.1)
        #expect(drain(&queue, live: Set(items.map(\.1))) == expected)
        #expect(queue.first(isLive: { _ in true }) == nil)
    }

    @Test func deadItemsAreSkippedAndCompactedAway() {
        var queue = DueQueue<Int, Void>()
        for id in 1...1_000 { queue.insert(id % 7 == 0 ? 0 : id, id: id) }
        let live = Set((1...1_000).filter { $0 % 3 == 0 })
        queue.compact { live.contains($0) }
        #expect(queue.count == live.count)
        let popped = drain(&queue, live: live)
        #expect(popped.count == live.count)
        #expect(popped.prefix(3) == [21, 42, 63], "key 0 first, by insertion")
    }

    @Test func aShuffledScheduleMatchesSorting() {
        var seed: UInt64 = 42
        func next(below bound: Int) -> Int {
            seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int((seed >> 33) % UInt64(bound))
        }
        var queue = DueQueue<Int, Void>()
        var items: [(Int, Int)] = []
        for id in 1...5_000 {
            // Mostly increasing keys, with every tenth one earlier: both paths.
            let key = id % 10 == 0 ? next(below: id) : id
            items.append((key, id))
            queue.insert(key, id: id)
        }
        let expected = items.sorted { $0.0 != $1.0 ? $0.0 < $1.0 : $0.1 < $1.1 }.map(\.1)
        #expect(drain(&queue, live: Set(items.map(\.1))) == expected)
    }

    @Test func valuesTravelWithTheirItemsAndCanDecideLiveness() {
        // A value that knows whether it is still wanted: no lookup by identifier.
        final class Wanted { var isWanted = true; let name: String; init(_ name: String) { self.name = name } }
        var queue = DueQueue<Int, Wanted>()
        let values = ["c", "a", "d", "b"].map(Wanted.init)
        for (index, (key, value)) in zip([30, 10, 40, 20], values).enumerated() { queue.insert(key, id: index, value: value) }
        values[3].isWanted = false   // "b"
        var popped: [String] = []
        while let first = queue.first(isLiveItem: { $0.value.isWanted }) {
            queue.removeFirst(first)
            popped.append(first.value.name)
        }
        #expect(popped == ["a", "c", "d"])
        #expect(queue.count == 0)
        #expect(queue.items.isEmpty)
    }
}
