/// A cryptographic operation that failed: which one, and why. Nothing it guarded was opened:
/// an AEAD that fails its tag returns no plaintext.
public struct CryptoError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What went wrong.
    public enum Code: Sendable, Hashable {
        /// The AEAD's tag did not verify: the ciphertext, its nonce, its associated data or the
        /// key is not the one it was sealed with (damaged, edited, moved or the wrong key).
        case authenticationFailed
        /// The system's random generator failed: nothing was generated (never a weak fallback).
        case randomUnavailable
        /// A key of `count` bytes where `expected` are needed.
        case invalidKeyLength(count: Int, expected: Int)
        /// An input or output of the wrong size: `what`, and its size.
        case invalidLength(what: String, count: Int)
        /// The cryptographic library refused the call (out of memory, or an algorithm missing
        /// from its build).
        case libraryFailure
        /// This platform's build has no implementation of the operation.
        case unsupported
    }

    /// What went wrong.
    public var code: Code
    /// The operation: "AES-256-GCM open", "HKDF-SHA256", …
    public var operation: String

    /// Creates an error.
    public init(_ code: Code, operation: String) {
        self.code = code
        self.operation = operation
    }

    /// What failed, and what to do about it.
    public var description: String {
        switch code {
        case .authenticationFailed:
            "\(operation): the authentication tag does not verify — the data was damaged or edited, belongs elsewhere, "
                + "or the key is not the one it was sealed with; nothing was decrypted"
        case .randomUnavailable:
            "\(operation): the system's random generator (\(LibCrypto.name)) failed; nothing was generated — check that "
                + "/dev/urandom and getrandom(2) work in this sandbox"
        case .invalidKeyLength(let count, let expected):
            "\(operation): a key of \(count) bytes where \(expected) are needed"
        case .invalidLength(let what, let count):
            "\(operation): \(what) of \(count) bytes is outside what the operation accepts"
        case .libraryFailure:
            "\(operation): \(LibCrypto.name) refused the call (out of memory, or the algorithm is missing from its build)"
        case .unsupported:
            "\(operation) is not available on this platform's build of AppKernelCore"
        }
    }
}
