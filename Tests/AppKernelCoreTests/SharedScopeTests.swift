import AppKernelCore
import Testing

/// The one task-local environment of the shared objects (issue 31): inside a scope a slot
/// resolves to the scope's object, in child tasks too; outside, to the process's.
struct SharedScopeTests {
    static let counter = SharedScope.Key<Counter>("counter")
    final class Counter: Sendable { let id: Int; init(_ id: Int) { self.id = id } }
    static let process = Counter(0)

    @Test func aSlotResolvesToTheScopesObjectInChildTasksAndToTheProcessOutside() async {
        #expect(SharedScope.resolve(Self.counter, make: { Counter(1) }, process: { Self.process }).id == 0)
        let scope = SharedScope(name: "one")
        await scope.withValue {
            let first = SharedScope.resolve(Self.counter, make: { Counter(1) }, process: { Self.process })
            let inChild = await Task { SharedScope.resolve(Self.counter, make: { Counter(2) }, process: { Self.process }) }.value
            #expect(first.id == 1 && inChild === first)
        }
        #expect(scope[Self.counter]?.id == 1)
        #expect(SharedScope.current == nil)
    }

    @Test func twoScopesNeverShareAnObject() async {
        let ids = await withTaskGroup(of: Int.self) { group in
            for n in 1...8 {
                group.addTask {
                    SharedScope(name: "\(n)").withValue {
                        SharedScope.resolve(Self.counter, make: { Counter(n) }, process: { Self.process }).id
                    }
                }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
        #expect(ids.sorted() == Array(1...8))
    }

    @Test func finishRunsTheFinishersNewestFirstOnceAndEmptiesTheSlots() {
        let scope = SharedScope(name: "finishing")
        let order = Locked<[String]>([])
        scope.onFinish { order.withLock { $0.append("first") } }
        scope.onFinish { order.withLock { $0.append("second") } }
        scope[Self.counter] = Counter(3)
        scope.finish()
        scope.finish()
        #expect(order.withLock { $0 } == ["second", "first"])
        #expect(scope[Self.counter] == nil && scope.isFinished)
    }
}
