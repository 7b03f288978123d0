import Testing
import AppKernelCore

/// The listener list against a model: a plain array of live listener ids. Every step — add,
/// cancel, drop, deliver with listeners that cancel others, drop their own token, add listeners
/// or deliver again from inside the delivery — is drawn from a seeded generator, run on the real
/// list and on the model, and the two must agree on who heard what, in which order, how many are
/// live, and whose closure has been freed. The orders and mixes cover every path of the list's
/// compaction (emptied slots before, among and after the live entries; entries marked during a
/// delivery), which no hand-written case covers alone.
@MainActor
struct ListenerListModelTests {
    /// What a listener does when it hears an outer delivery.
    enum Action: Equatable {
        case nothing
        case cancel(Int)
        case dropOwnToken
        case add(Int)
        case deliverAgain
    }

    /// Frees nothing but tells when it is freed: each listener's closure captures one.
    final class Tracker {
        let id: Int
        let freed: (Int) -> Void
        init(id: Int, freed: @escaping (Int) -> Void) { self.id = id; self.freed = freed }
        deinit { freed(id) }
    }

    /// The real list and its tokens, and what the listeners heard.
    @MainActor final class Real {
        let list = ListenerList()
        var tokens: [Int: ListenerToken] = [:]
        var heard: [String] = []
        var freed: Set<Int> = []
        var actions: [Int: Action] = [:]

        func add(_ id: Int) {
            let tracker = Tracker(id: id) { [unowned self] in freed.insert($0) }
            let token = list.add { [unowned self] (depth: Int) in
                heard.append("\(tracker.id)@\(depth)")
                guard depth == 0 else { return }
                switch actions[tracker.id, default: .nothing] {
                case .nothing: break
                case .cancel(let other): tokens[other]?.cancel()
                case .dropOwnToken: tokens[tracker.id] = nil
                case .add(let new): add(new)
                case .deliverAgain: list.deliver(1)
                }
            }
            tokens[id] = token
        }
    }

    /// The model: live ids in registration order.
    struct Model {
        var live: [Int] = []
        var ended: Set<Int> = []
        var heard: [String] = []

        mutating func end(_ id: Int) {
            guard let index = live.firstIndex(of: id) else { return }
            live.remove(at: index)
            ended.insert(id)
        }

        mutating func deliver(depth: Int, actions: [Int: Action]) {
            for id in live where !ended.contains(id) {
                heard.append("\(id)@\(depth)")
                guard depth == 0 else { continue }
                switch actions[id, default: .nothing] {
                case .nothing: break
                case .cancel(let other): end(other)
                case .dropOwnToken: end(id)
                case .add(let new): live.append(new)
                case .deliverAgain: deliver(depth: 1, actions: actions)
                }
            }
        }
    }

    @Test(arguments: 1...12)
    func theListAgreesWithItsModelUnderRandomChurn(seed: UInt64) {
        var generator = ExclusivityStressTests.SeededGenerator(state: seed)
        let real = Real()
        var model = Model()
        var nextID = 0
        func pickLive() -> Int? { model.live.isEmpty ? nil : model.live[Int(generator.next() % UInt64(model.live.count))] }

        for step in 0..<400 {
            let roll = generator.next() % 100
            switch roll {
            case 0..<35:
                // A burst of registrations, so the list reaches sizes where compaction runs.
                for _ in 0..<Int(1 + generator.next() % 12) {
                    real.add(nextID)
                    model.live.append(nextID)
                    nextID += 1
                }
            case 35..<55:
                // Cancel several, in one of three orders: oldest first, newest first, random.
                let order = generator.next() % 3
                for _ in 0..<Int(1 + generator.next() % 10) {
                    guard !model.live.isEmpty else { break }
                    let id = order == 0 ? model.live.first! : order == 1 ? model.live.last! : pickLive()!
                    real.tokens[id]?.cancel()
                    model.end(id)
                }
            case 55..<65:
                if let id = pickLive() {
                    real.tokens[id] = nil
                    model.end(id)
                }
            default:
                var actions: [Int: Action] = [:]
                for id in model.live {
                    switch generator.next() % 10 {
                    case 0: actions[id] = pickLive().map(Action.cancel) ?? .nothing
                    case 1: actions[id] = .dropOwnToken
                    case 2: actions[id] = .add(nextID); nextID += 1
                    case 3 where generator.next() % 4 == 0: actions[id] = .deliverAgain
                    default: break
                    }
                }
                real.actions = actions
                real.list.deliver(0)
                model.deliver(depth: 0, actions: actions)
            }
            #expect(real.heard == model.heard, "step \(step) (seed \(seed))")
            #expect(real.list.count == model.live.count, "step \(step) (seed \(seed))")
            #expect(real.list.isEmpty == model.live.isEmpty)
            #expect(real.freed == model.ended, "a listener's closure is freed when, and only when, its registration ended")
            if real.heard != model.heard || real.freed != model.ended { return }
        }
        // Whatever is left ends with its tokens.
        let everyListener = model.ended.union(model.live)
        real.tokens.removeAll()
        #expect(real.list.count == 0)
        #expect(real.freed == everyListener)
    }
}
