import AppKernel
import AppKernelTesting
import Foundation
import Testing

/// A token dropped on the main actor ends its registration at once: its isolated deinit runs
/// inline (`swift_task_deinitOnExecutor`), inside whatever released it. When that release happens
/// inside a modification of a registrar's storage — a hook chain compacting its cancelled
/// entries, the application removing a launch gate — and the registration's closure owned
/// another token of the same registrar, that token's cancellation modifies the same storage
/// again: the runtime's exclusivity check traps ("Simultaneous accesses …, but modification
/// requires exclusive access", the current access reached from `swift_task_deinitOnExecutor`).
///
/// A trap ends the process, so each scenario runs in a child process (an exit test) that must
/// exit normally, and prints what it saw for the parent to check. The scenarios are what users
/// write: a hook (or gate) that keeps another one's token to end it later.
///
/// Swift 6.2 and later only: exit tests came with its testing library, and before it a token's
/// deinit was not isolated (the cancellation hopped to the main actor later, never inline).
#if compiler(>=6.2)
@MainActor
struct TokenReleaseExclusivityTests {
    /// Runs `scenario` in a child process; returns the line it printed (`nil` if it died — the
    /// result of a failed exit test is `nil`, so the trap's own message is not shown here: call
    /// `Scenario.run()` in-process to see it, "Simultaneous accesses to 0x…, but modification
    /// requires exclusive access", the current access under `swift_task_deinitOnExecutor`).
    func childOutput(_ scenario: Scenario) async -> String? {
        let result = await #expect(processExitsWith: .success, observing: [\.standardOutputContent],
                                   "the scenario trapped: a token released inside a modification of its registrar's storage") { [scenario] in
            let line = try await MainActor.run { try scenario.run() }
            print("scenario: \(line)")
        }
        guard let output = result.map({ String(decoding: $0.standardOutputContent, as: UTF8.self) }) else { return nil }
        return output.split(separator: "\n").first { $0.hasPrefix("scenario: ") }.map { String($0.dropFirst("scenario: ".count)) }
    }

    /// A hook keeps the only reference to a sibling's token (same point). Dropping the hook's
    /// token leaves its entry marked in the chain; the next dispatch compacts the chain, which
    /// frees the entry, its closure and the sibling's token — whose deinit cancels the sibling
    /// in the same chain.
    @Test func aHookOwningASiblingsTokenIsFreedWhenADispatchCompactsTheChain() async {
        #expect(await childOutput(.compactedByDispatch) == "first: owner,sibling · second: none · hooks left: before [] handle []")
    }

    /// The same, when the compaction comes from cancelling many hooks (no dispatch in between)
    /// on a registry of the SDK manager's kind (its own points).
    @Test func aHookOwningASiblingsTokenIsFreedWhenCancellationsCompactTheChain() async {
        #expect(await childOutput(.compactedByCancellations) == "handlers left: [] · before hooks left: 1")
    }

    /// The same through `runHandle` (what the SDK manager's launch phases use).
    @Test func aHookOwningASiblingsTokenIsFreedWhenRunHandleCompactsTheChain() async {
        #expect(await childOutput(.compactedByRunHandle) == "first: owner,sibling · second: none")
    }

    /// A launch gate keeps the only reference to another gate's token: removing the first gate
    /// frees its closure, and the other gate's token with it, whose cancellation removes that gate.
    @Test func aLaunchGateOwningAnotherGatesTokenIsRemovedWithIt() async {
        #expect(await childOutput(.launchGates) == "gates: [kept, owned, owner] → [kept]")
    }

    /// Listeners and observers (the listener table) already release a cancelled listener's
    /// closure outside any access to their storage; kept here so that stays true.
    @Test func aListenerOwningASiblingsTokenIsFreedWithIt() async {
        #expect(await childOutput(.listeners) == "first: owner,sibling · second: none")
    }
}

/// A point of a registry of the SDK manager's kind.
enum ExclusivityPoint: String, HookPoint {
    case phase
    typealias Payload = Void
    var hookPointName: String { rawValue }
}

/// The scenarios the child processes run.
enum Scenario: String, Codable, Sendable {
    case compactedByDispatch, compactedByCancellations, compactedByRunHandle, launchGates, listeners

    @MainActor
    func run() throws -> String {
        switch self {
        case .compactedByDispatch: try Self.compactedByDispatch()
        case .compactedByCancellations: Self.compactedByCancellations()
        case .compactedByRunHandle: try Self.compactedByRunHandle()
        case .launchGates: try Self.launchGates()
        case .listeners: try Self.listeners()
        }
    }

    @MainActor
    static func compactedByDispatch() throws -> String {
        let host = SimulatedHost()
        let app = try host.launch(delegate: DefaultApplicationDelegate())
        let heard = CallLog()
        var sibling: ListenerToken? = app.hooks.handle(.didReceiveMemoryWarning, label: "sibling") { _ in
            heard.append("sibling")
            return .continue
        }
        var owner: ListenerToken? = app.hooks.before(.didReceiveMemoryWarning, label: "owner") { [sibling] _ in
            withExtendedLifetime(sibling) { heard.append("owner") }
        }
        sibling = nil   // only the owner's closure holds it now
        try host.sendMemoryWarning()
        let first = heard.take()
        owner = nil     // the owner's entry stays, marked, until the chain is compacted
        try host.sendMemoryWarning()
        let second = heard.take()
        withExtendedLifetime(owner) {}
        return "first: \(first.joined(separator: ",")) · second: \(second.isEmpty ? "none" : second.joined(separator: ","))"
            + " · hooks left: before \(app.hooks.hooks(at: ApplicationEvent.didReceiveMemoryWarning, stage: .before))"
            + " handle \(app.hooks.hooks(at: ApplicationEvent.didReceiveMemoryWarning, stage: .handle))"
    }

    @MainActor
    static func compactedByCancellations() -> String {
        let hooks = HookRegistry()
        var victim: ListenerToken? = hooks.handle(point: ExclusivityPoint.phase, label: "victim") { _ in .continue }
        var tokens: [ListenerToken?] = []
        tokens.append(hooks.before(point: ExclusivityPoint.phase, label: "owner") { [victim] _ in withExtendedLifetime(victim) {} })
        victim = nil
        for index in 1..<10 { tokens.append(hooks.before(point: ExclusivityPoint.phase, label: "b\(index)") { _ in }) }
        // Nine cancellations of ten: the ninth compacts the `before` list, freeing the owner's
        // entry (its token went first) and with it the victim's token.
        for index in 0..<9 { tokens[index] = nil }
        return "handlers left: \(hooks.hooks(at: ExclusivityPoint.phase, stage: .handle))"
            + " · before hooks left: \(hooks.hooks(at: ExclusivityPoint.phase, stage: .before).count)"
    }

    @MainActor
    static func compactedByRunHandle() throws -> String {
        let hooks = HookRegistry()
        let heard = CallLog()
        var sibling: ListenerToken? = hooks.handle(point: ExclusivityPoint.phase, label: "sibling") { _ in
            heard.append("sibling")
            return .continue
        }
        var owner: ListenerToken? = hooks.handle(point: ExclusivityPoint.phase, priority: 1, label: "owner") { [sibling] _ in
            withExtendedLifetime(sibling) { heard.append("owner") }
            return .continue
        }
        sibling = nil
        _ = try hooks.runHandle(ExclusivityPoint.phase, (), onFailure: .abort)
        let first = heard.take()
        owner = nil
        _ = try hooks.runHandle(ExclusivityPoint.phase, (), onFailure: .abort)
        let second = heard.take()
        withExtendedLifetime(owner) {}
        return "first: \(first.joined(separator: ",")) · second: \(second.isEmpty ? "none" : second.joined(separator: ","))"
    }

    @MainActor
    static func launchGates() throws -> String {
        let app = Application(delegate: DefaultApplicationDelegate(), clock: TestClock())
        let kept = app.addLaunchGate(named: "kept") {}
        var owned: ListenerToken? = app.addLaunchGate(named: "owned") {}
        var owner: ListenerToken? = app.addLaunchGate(named: "owner") { [owned] in withExtendedLifetime(owned) {} }
        owned = nil
        let before = app.launchGateNames
        owner = nil     // removes the owner's gate; its closure held the owned gate's token
        let after = app.launchGateNames
        withExtendedLifetime((kept, owner)) {}
        return "gates: [\(before.joined(separator: ", "))] → [\(after.joined(separator: ", "))]"
    }

    @MainActor
    static func listeners() throws -> String {
        let host = SimulatedHost()
        let app = try host.launch(delegate: DefaultApplicationDelegate())
        let heard = CallLog()
        var sibling: ListenerToken? = app.addListener(for: .didReceiveMemoryWarning) { _ in heard.append("sibling") }
        var owner: ListenerToken? = app.addListener(for: .didReceiveMemoryWarning) { [sibling] _ in
            withExtendedLifetime(sibling) { heard.append("owner") }
        }
        sibling = nil
        try host.sendMemoryWarning()
        let first = heard.take().sorted()
        owner = nil
        try host.sendMemoryWarning()
        let second = heard.take()
        withExtendedLifetime(owner) {}
        return "first: \(first.joined(separator: ",")) · second: \(second.isEmpty ? "none" : second.joined(separator: ","))"
    }
}
#endif
