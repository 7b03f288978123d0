public import Foundation
import AppKernelCore

extension EmbeddedOrg {
    /// Where the org's record timestamps (`CreatedDate`, `LastModifiedDate`, `SystemModstamp`)
    /// come from: the system's wall clock, or a manual clock a test sets and steps.
    ///
    /// The org reads it once per write — a request, a composite or collection request (one
    /// transaction, one timestamp, as in Salesforce), or a server-side edit a test makes — and a
    /// manual clock moves by its `step` after each reading, so consecutive writes get distinct,
    /// predictable times.
    ///
    /// ```swift
    /// let time = EmbeddedOrg.RecordClock(start: SalesforceDateTime.date(fromMillis: 1_795_514_400_000), step: .seconds(1))
    /// let org = EmbeddedOrg.sample(recordClock: time)     // seeds at 10:00:00, 10:00:01, …
    /// time.advance(by: .seconds(3600))                     // an hour passes on the server
    /// ```
    public final class RecordClock: Sendable {
        /// `nil` for the wall clock; else the manual time and step.
        private let manual: Locked<(now: Date, step: Duration)?>

        /// The system's wall clock.
        public static var system: RecordClock { RecordClock() }

        private init() { manual = Locked(nil) }

        /// A manual clock at `start`, moving by `step` after each reading.
        public init(start: Date, step: Duration = .seconds(1)) {
            manual = Locked((start, step))
        }

        /// The time a write is stamped with; a manual clock then moves on by its step.
        public func now() -> Date {
            manual.withLock { state in
                guard let current = state else { return Date() }
                state = (current.now.addingTimeInterval(Self.seconds(current.step)), current.step)
                return current.now
            }
        }

        /// The time the next write would get, without moving the clock (the wall clock's now).
        public var current: Date { manual.withLock { $0?.now } ?? Date() }

        /// Moves a manual clock forward (the wall clock ignores it).
        public func advance(by duration: Duration) {
            manual.withLock { state in
                if let current = state { state = (current.now.addingTimeInterval(Self.seconds(duration)), current.step) }
            }
        }

        /// Sets a manual clock to `date` (the wall clock ignores it).
        public func set(_ date: Date) {
            manual.withLock { state in
                if let current = state { state = (date, current.step) }
            }
        }

        private static func seconds(_ duration: Duration) -> TimeInterval {
            let (seconds, attoseconds) = duration.components
            return TimeInterval(seconds) + TimeInterval(attoseconds) / 1e18
        }
    }
}
