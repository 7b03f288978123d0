// The listener table: AppKernel's listener lists and their delivery loop (ListenerList.swift),
// the lists by key (this file) and the event queue (EventQueue.swift), beside the one token type
// (ListenerToken.swift). Delivery is the hot path of the whole kernel, so these files — and only
// these — trade some of the compiler's safety checks for speed (`@exclusivity(unchecked)`,
// `Unmanaged`, `_withUnsafeGuaranteedRef`, `unsafeDowncast`, `@inline(__always)`). Each use
// carries its proof beside it; nothing outside them may use those constructs (DESIGN.md, "Rules").
//
// `APPKERNEL_CHECKED_EXCLUSIVITY` (a build flag, `.ci/sanitizers exclusivity`) turns every
// `@exclusivity(unchecked)` back into an ordinary checked declaration, so that the runtime
// checks the proofs: the exclusivity stress test runs the dispatch path that way.
//
// Everything here is touched on the main actor only. The types are not actor-isolated so that the
// per-listener loop carries no executor check; debug builds check the isolation instead
// (`checkIsolation()`).
//
// The types are `package` — modules of this package use them (the kernel, the testing module);
// no client of the package sees them — and `@usableFromInline`, with their
// hot members `@inlinable`: Swift 6.3 inlines and specialises the `@inlinable` members of a
// `package` type in another module only when the type itself is `@usableFromInline` (without
// it, a generic loop like the delivery loop ran unspecialised, 40× slower, in a two-module test).

/// Listener lists by key — an application's listeners by event name.
@usableFromInline package final class ListenerTable<Key: Hashable>: @unchecked Sendable {
    // Same argument as `ListenerList`: main actor only; instantaneous accesses.
    #if APPKERNEL_CHECKED_EXCLUSIVITY
    @usableFromInline var lists: [Key: ListenerList] = [:]
    #else
    @exclusivity(unchecked) @usableFromInline var lists: [Key: ListenerList] = [:]
    #endif

    /// An empty table.
    package init() {}

    /// The list for `key`, if anything was ever registered there.
    @inlinable package func list(_ key: Key) -> ListenerList? { lists[key] }

    /// The list for `key`, made on first use.
    package func makeList(_ key: Key) -> ListenerList {
        if let list = lists[key] { return list }
        let list = ListenerList()
        lists[key] = list
        return list
    }
}

