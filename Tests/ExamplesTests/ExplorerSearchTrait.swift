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
