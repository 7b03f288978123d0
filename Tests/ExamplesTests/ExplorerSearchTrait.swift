import Foundation
import Testing

extension Trait where Self == ConditionTrait {
    /// Off under `.ci/sanitizers` (`APPKERNEL_SANITIZER` set): a search runs the same code
    /// thousands of times, 5–15× slower there, on the main thread every main-actor test shares;
    /// the replays and printed tests of the same worlds still run under the sanitizers.
    static var exploresManySchedules: Self {
        .disabled(if: ProcessInfo.processInfo.environment["APPKERNEL_SANITIZER"] != nil, "a search of thousands of schedules; its replays run under the sanitizer")
    }
}

extension Trait where Self == ConditionTrait {
    /// Off under `.ci/sanitizers` (`APPKERNEL_SANITIZER` set): AccountsApp's app replayed
    /// in-process leaves, under LeakSanitizer, its torn-down worlds' SDK managers alive (their
    /// launch tasks reported suspended at exit) — found on issue 32's last stop, not yet
    /// explained; issue 32 stays open until it is. It runs in the plain suite.
    static var replaysAccountsAppInProcess: Self {
        .disabled(if: ProcessInfo.processInfo.environment["APPKERNEL_SANITIZER"] != nil,
                  "AccountsApp's replayed worlds leak under LeakSanitizer: open on issue 32")
    }
}
