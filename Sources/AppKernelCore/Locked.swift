import Foundation

/// A value behind an `NSLock`, as a reference that closures on other threads can share: the
/// package's one lock box for state taken on several threads (the test clock, the process host's
/// signal queue, SmartStore's writer and readers, the transports, the credential store, the test
/// servers).
///
/// An `NSLock` (a pthread mutex), not `Synchronization.Mutex`: on Linux `Mutex` locks with raw
/// futex calls that ThreadSanitizer does not model, so every access made under one from two
/// threads is reported as a race (`.ci/sanitizers.d/tsan.supp`); ThreadSanitizer intercepts
/// pthread locks. No `Mutex` is left in the package, its tests or its examples.
///
/// `@unchecked Sendable`: `value` is read and written only inside `withLock`, under `lock`.
package final class Locked<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    /// Wraps `value`.
    package init(_ value: Value) { self.value = value }

    /// Runs `body` with the value, under the lock; throws what `body` throws, typed.
    package func withLock<Result, Failure: Error>(_ body: (inout Value) throws(Failure) -> Result) throws(Failure) -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
