import Foundation

/// A value behind an `NSLock` — what ``TestClock`` keeps its state in instead of
/// `Synchronization.Mutex`.
///
/// On Linux, `Mutex` locks with raw futex calls that ThreadSanitizer does not model, so every
/// access made under one from two threads is reported as a race (`.ci/sanitizers.d/tsan.supp`
/// says why that cannot be a suppression). `NSLock` is a pthread mutex, which ThreadSanitizer
/// intercepts. The test clock is reached from many threads at once (services sleeping on it in
/// the examples run under ThreadSanitizer), so it takes this lock; the kernel itself keeps `Mutex`.
///
/// `@unchecked Sendable`: `value` is read and written only inside `withLock`, under `lock`.
final class Locked<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    /// Wraps `value`.
    init(_ value: Value) { self.value = value }

    /// Runs `body` with the value, under the lock.
    func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
