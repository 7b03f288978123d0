import Foundation
import AppKernelCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One request's deadline and cancellation, shared by the caller's task and the thread that does
/// the request's blocking I/O.
///
/// Cancelling shuts the socket in use down (`shutdown(2)`), which wakes a `poll` waiting on it at
/// once; the socket is registered and deregistered under the lock, so a descriptor that was
/// closed (and whose number the system may hand out again) is never shut down.
final class TransferControl: Sendable {
    private struct State {
        var cancelled = false
        var socket: Int32 = -1
    }

    private let state = Locked(State())
    /// When the whole request must be over: connecting, sending and the last byte of the answer.
    let deadline: ContinuousClock.Instant

    init(deadline: ContinuousClock.Instant) { self.deadline = deadline }

    /// Whether the caller gave up.
    var isCancelled: Bool { state.withLock { $0.cancelled } }

    /// Marks the request cancelled and wakes its I/O.
    func cancel() {
        state.withLock { state in
            state.cancelled = true
            if state.socket >= 0 { _ = shutdown(state.socket, Int32(SHUT_RDWR)) }
        }
    }

    /// Registers the socket the request now uses; `false` when the request was cancelled already.
    func attach(_ socket: Int32) -> Bool {
        state.withLock { state in
            guard !state.cancelled else { return false }
            state.socket = socket
            return true
        }
    }

    /// Forgets the socket (before it is closed or given back to the pool).
    func detach() {
        state.withLock { $0.socket = -1 }
    }

    /// Milliseconds left before the deadline, for `poll` (0 when it has passed, at most a day).
    var millisecondsLeft: Int32 {
        let left = deadline - ContinuousClock.now
        guard left > .zero else { return 0 }
        let (seconds, attoseconds) = left.components
        return Int32(min(86_400_000, seconds * 1000 + attoseconds / 1_000_000_000_000_000 + 1))
    }
}

/// Why a transfer stopped, inside the transport; mapped to the public errors at the top.
enum TransferFailure: Error {
    /// The deadline passed.
    case timedOut
    /// The caller cancelled.
    case cancelled
    /// A failure of the kind `code`; the request's name is added at the top.
    case failed(HTTPTransportError.Code, String)
    /// The body passed its limit.
    case tooLarge(ResponseTooLarge)
}
