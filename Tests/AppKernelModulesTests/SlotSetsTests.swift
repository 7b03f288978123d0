import Testing
@testable import AppKernelModules

/// The bitsets the scheduler keeps slots and ranks in.
struct SlotSetsTests {
    @Test func aSlotSetHoldsWhatWasInsertedUntilRemoved() {
        var set = SlotSet([3, 64, 130], capacity: 200)
        #expect((0..<200).filter { set.contains($0) } == [3, 64, 130])
        set.insert(199)
        set.remove(64)
        #expect((0..<200).filter { set.contains($0) } == [3, 130, 199])
    }

    @Test func aRankSetHandsBackItsLowestFirstAcrossItsLevels() {
        // 300,000 ranks: three summary levels above the ranks' own.
        var ranks = RankSet(capacity: 300_000)
        #expect(ranks.isEmpty)
        #expect(ranks.removeFirst() == nil)
        var generator = SystemRandomNumberGenerator()
        var reference: Set<Int> = []
        var taken: [Int] = []
        for round in 0..<20_000 {
            if round % 3 == 2, !reference.isEmpty {
                let lowest = reference.min()!
                #expect(ranks.removeFirst() == lowest)
                reference.remove(lowest)
                taken.append(lowest)
            } else {
                let rank = Int.random(in: 0..<300_000, using: &generator)
                ranks.insert(rank)
                reference.insert(rank)
            }
        }
        while let rank = ranks.removeFirst() {
            #expect(rank == reference.min())
            reference.remove(rank)
        }
        #expect(reference.isEmpty)
        #expect(ranks.isEmpty)
    }

    @Test func aRankSetOfOneWordWorksToo() {
        var ranks = RankSet(capacity: 10)
        for rank in [7, 2, 9, 2] { ranks.insert(rank) }
        #expect(ranks.removeFirst() == 2)
        #expect(ranks.removeFirst() == 7)
        ranks.insert(0)
        #expect(ranks.removeFirst() == 0)
        #expect(ranks.removeFirst() == 9)
        #expect(ranks.removeFirst() == nil)
    }
}
