import Foundation
public import Testing

/// What the explorer's tests share (three test targets run searches and paste printed tests).
extension Trait where Self == ConditionTrait {
    /// Off under `.ci/sanitizers` (`APPKERNEL_SANITIZER` set): a search runs the same code
    /// thousands of times, 5–15× slower there, on the main thread every main-actor test shares;
    /// the replays and printed tests of the same worlds still run under the sanitizers.
    public static var exploresManySchedules: Self {
        .disabled(if: ProcessInfo.processInfo.environment["APPKERNEL_SANITIZER"] != nil, "a search of thousands of schedules; its replays run under the sanitizer")
    }
}

extension Issue {
    /// Whether this is a failed `#expect` — the only issue a pasted printed test may record
    /// inside `withKnownIssue` (a thrown error means the paste did not reach its expectation).
    public var isExpectationFailure: Bool {
        if case .expectationFailed = kind { return true }
        return false
    }
}
