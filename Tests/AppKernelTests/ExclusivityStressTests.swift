import AppKernel
import AppKernelTesting
import Testing

/// The listener table under churn: listeners that cancel, drop and replace tokens (their own and
/// others'), register new listeners and raise new events while an event is being delivered, and
/// tokens whose last reference goes on other threads (so that their isolated deinit hops to the
/// main actor between deliveries); and hook chains under the same churn, with hooks that own
/// other hooks' tokens (so that a chain's compaction releases tokens of that chain). Every step is
/// drawn from a seeded generator, so a failure replays.
///
/// Built normally, the test checks the delivery rules under churn (no listener hears an event
/// after its token ended; every event is delivered). Built with
/// `-Xswiftc -DAPPKERNEL_CHECKED_EXCLUSIVITY` (`.ci/sanitizers exclusivity`), the table's
/// `@exclusivity(unchecked)` declarations become ordinary checked ones, so the runtime traps on
/// any overlapping access the proofs in the listener table (`ListenerList.swift`, `EventQueue.swift`) rule out.
@MainActor
@Suite(.serialized)
struct ExclusivityStressTests {
    /// A SplitMix64 generator: the same seed, the same run.
    struct SeededGenerator: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE5_E9B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    /// Whether a registration was ended on the main actor (cancelled or dropped there): from then
    /// on its listener must hear nothing.
    @MainActor final class Mark { var ended = false }

    /// The tokens, by slot; a listener may replace or drop any of them while it runs.
    @MainActor final class Slots {
        var tokens: [ListenerToken?]
        var marks: [Mark?]
        var generator: SeededGenerator
        var heard = 0
        var reentered = 0
        init(count: Int, seed: UInt64) {
            tokens = Array(repeating: nil, count: count)
            marks = Array(repeating: nil, count: count)
            generator = SeededGenerator(state: seed)
        }
        func random(_ bound: Int) -> Int { Int.random(in: 0..<bound, using: &generator) }
        /// Ends `slot`'s registration here, by cancelling or dropping its token.
        func end(_ slot: Int, dropping: Bool) {
            marks[slot]?.ended = true
            marks[slot] = nil
            if dropping { tokens[slot] = nil } else { tokens[slot]?.cancel() }
        }
        /// Takes `slot`'s token out, unmarked: it travels to another thread and ends there.
        func takeOut(_ slot: Int) -> ListenerToken? {
            marks[slot] = nil
            defer { tokens[slot] = nil }
            return tokens[slot]
        }
    }

    static let slotCount = 48

    @Test(arguments: [UInt64(1), 2, 3])
    func churnDuringDeliveryKeepsTheRules(seed: UInt64) async throws {
        let host = SimulatedHost()
        let app = try host.launch(delegate: DefaultApplicationDelegate())
        let slots = Slots(count: Self.slotCount, seed: seed)
        for slot in 0..<Self.slotCount { register(slot, app: app, host: host, slots: slots) }
        var everyEvent = app.addListener { (_: LifecycleEvent) in }
        for round in 0..<400 {
            try host.sendMemoryWarning()
            // Hand a few tokens to other threads and let their last reference go there: the
            // isolated deinit hops back to the main actor and runs between deliveries.
            var travelling: [ListenerToken] = []
            for _ in 0..<slots.random(4) {
                if let token = slots.takeOut(slots.random(Self.slotCount)) { travelling.append(token) }
            }
            let batch = travelling
            travelling.removeAll()
            await withTaskGroup(of: Void.self) { group in
                for token in batch { group.addTask { withExtendedLifetime(token) {} } }
            }
            if round % 3 == 0 { await Task.yield() }
            if round % 50 == 0 {
                // A stream and an every-event listener come and go too.
                everyEvent = app.addListener { (_: LifecycleEvent) in }
                let stream = app.lifecycleEvents()
                try host.sendMemoryWarning()
                _ = stream
            }
            // Refill ended slots, so the churn goes on.
            for slot in 0..<Self.slotCount where slots.tokens[slot] == nil && slots.random(2) == 0 {
                register(slot, app: app, host: host, slots: slots)
            }
        }
        withExtendedLifetime(everyEvent) {}
        #expect(slots.heard > 1_000, "the listeners kept hearing events: \(slots.heard)")
        #expect(slots.reentered > 0)
        try host.terminate()
    }

    /// Registers the listener of `slot` (ending the one there): each call draws one action.
    func register(_ slot: Int, app: Application, host: SimulatedHost, slots: Slots) {
        let mark = Mark()
        let token = app.addListener(for: .didReceiveMemoryWarning) { [weak slots, weak host, unowned app] _ in
            guard let slots, let host else { return }
            #expect(!mark.ended, "slot \(slot) heard an event after its token ended")
            slots.heard += 1
            let other = slots.random(Self.slotCount)
            switch slots.random(8) {
            case 0: slots.end(other, dropping: false)
            case 1: slots.end(other, dropping: true)      // dropped here: the isolated deinit runs inline
            case 2: slots.end(slot, dropping: true)       // drops its own token while it runs
            case 3: register(other, app: app, host: host, slots: slots)   // replaces (and drops) another
            case 4:
                if slots.random(4) == 0 {
                    slots.reentered += 1
                    _ = try? host.sendMemoryWarning()   // re-enters: queued behind this delivery
                }
            case 5:
                let nested = ObserverList<Int>()
                var inner: ListenerToken? = nested.add { _ in }
                let outer = nested.add { _ in inner = nil }
                nested.notify(1)
                nested.notify(2)
                withExtendedLifetime(outer) {}
                #expect(inner == nil)
            default:
                break
            }
        }
        slots.end(slot, dropping: true)
        slots.marks[slot] = mark
        slots.tokens[slot] = token
    }

    /// Hooks under churn, some owning the tokens of others (a later slot's, so ownership never
    /// cycles): when a chain compacts an owner's cancelled entry, the owned token goes with it and
    /// its deinit — inline, on the main actor — cancels a hook of the same chain. Hooks cancel, drop
    /// and replace tokens while the point is dispatched; `hooks(at:)` compacts between dispatches.
    @Test(arguments: [UInt64(11), 12, 13])
    func hookChurnWithTokensOwnedByHooksKeepsTheChainsConsistent(seed: UInt64) throws {
        let host = SimulatedHost()
        let app = try host.launch(delegate: DefaultApplicationDelegate())
        let slots = Slots(count: 32, seed: seed)
        func register(_ slot: Int) {
            var owned: ListenerToken?
            if slots.random(3) == 0, slot + 1 < 32 { owned = slots.takeOut(slots.random(32 - slot - 1) + slot + 1) }
            let body = { [weak slots, owned] in
                guard let slots else { return }
                withExtendedLifetime(owned) { slots.heard += 1 }
                let other = slots.random(32)
                switch slots.random(6) {
                case 0: slots.end(other, dropping: false)
                case 1: slots.end(other, dropping: true)
                case 2: register(other)
                default: break
                }
            }
            let point = ApplicationEvent.didReceiveMemoryWarning
            let token = switch slots.random(3) {
            case 0: app.hooks.before(point) { _ in body() }
            case 1: app.hooks.handle(point) { _ in body(); return .continue }
            default: app.hooks.after(point) { _ in body() }
            }
            slots.end(slot, dropping: true)
            slots.tokens[slot] = token
        }
        for slot in 0..<32 { register(slot) }
        for round in 0..<300 {
            try host.sendMemoryWarning()
            if round % 7 == 0 { _ = app.hooks.hooks(at: ApplicationEvent.didReceiveMemoryWarning, stage: .handle) }
            for slot in 0..<32 where slots.tokens[slot] == nil && slots.random(3) == 0 { register(slot) }
        }
        #expect(slots.heard > 1_000, "the hooks kept running: \(slots.heard)")
        // Every token in the slots goes; the tokens hooks owned go with their owners' entries.
        slots.tokens = Array(repeating: nil, count: 32)
        try host.sendMemoryWarning()
        for stage in [HookError.Stage.before, .handle, .after] {
            #expect(app.hooks.hooks(at: ApplicationEvent.didReceiveMemoryWarning, stage: stage).isEmpty, "\(stage)")
        }
    }

    /// Observers that end each other's registrations, and notify again, while a notification runs.
    @Test func observerListsSurviveReentrantChurn() {
        let list = ObserverList<Int>()
        let slots = Slots(count: 32, seed: 7)
        var total = 0
        func add(_ slot: Int) {
            slots.tokens[slot] = list.add { depth in
                total += 1
                let other = slots.random(32)
                switch slots.random(5) {
                case 0: slots.tokens[other] = nil
                case 1: slots.tokens[other]?.cancel()
                case 2: if depth < 3 { list.notify(depth + 1) }
                case 3: add(other)
                default: break
                }
            }
        }
        for slot in 0..<32 { add(slot) }
        for _ in 0..<2_000 {
            list.notify(0)
            for slot in 0..<32 where slots.tokens[slot]?.isCancelled ?? true { add(slot) }
        }
        #expect(total > 2_000)
        // The listeners hold `slots`, which holds their tokens: end them to let the cycle go.
        slots.tokens = Array(repeating: nil, count: 32)
    }
}
