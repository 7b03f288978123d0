#if canImport(COpenSSL)
import COpenSSL
#else
import CryptoKit
import Foundation
#endif

/// SHA-256 (FIPS 180-4), from the system's libcrypto on Linux (`EVP_sha256`) and CryptoKit on
/// Apple platforms. Checked against the FIPS 180-4 / NIST examples in the tests.
///
/// ```swift
/// let digest = SHA256.hash(Array("abc".utf8))          // 32 bytes
/// var hasher = SHA256(); hasher.update(part1); hasher.update(part2); let digest = hasher.finalize()
/// ```
///
/// A copy of a hasher carries on independently of the original.
public struct SHA256: Sendable {
    /// The digest's length in bytes.
    public static let digestLength = 32
    /// The block length in bytes.
    public static let blockLength = 64

    private var state = DigestState()

    /// Starts a new hash.
    public init() {}

    /// The digest of `bytes`.
    public static func hash(_ bytes: some Sequence<UInt8>) -> [UInt8] {
        var hasher = SHA256()
        hasher.update(bytes)
        return hasher.finalize()
    }

    /// Feeds more bytes.
    public mutating func update(_ bytes: some Sequence<UInt8>) {
        let fed: Bool? = bytes.withContiguousStorageIfAvailable { buffer in
            state.update(UnsafeRawBufferPointer(buffer))
            return true
        }
        if fed == nil { Array(bytes).withUnsafeBytes { state.update($0) } }
    }

    /// Finishes the hash and returns the 32-byte digest; the hasher then starts over.
    public mutating func finalize() -> [UInt8] {
        state.finalize()
    }
}

#if canImport(COpenSSL)
/// A libcrypto digest context (`EVP_MD_CTX`), copied on write so that ``SHA256`` is a value.
struct DigestState: Sendable {
    /// `@unchecked Sendable`: the context is only changed through a ``DigestState`` that holds
    /// the one reference to it (`isKnownUniquelyReferenced`, else it is copied first), so no two
    /// threads ever touch one context.
    final class Context: @unchecked Sendable {
        let pointer: OpaquePointer

        init() {
            guard let pointer = EVP_MD_CTX_new(), EVP_DigestInit_ex(pointer, EVP_sha256(), nil) == 1 else {
                fatalError("\(CryptoError(.libraryFailure, operation: "SHA-256"))")
            }
            self.pointer = pointer
        }

        init(copying other: Context) {
            guard let pointer = EVP_MD_CTX_new(), EVP_MD_CTX_copy_ex(pointer, other.pointer) == 1 else {
                fatalError("\(CryptoError(.libraryFailure, operation: "SHA-256"))")
            }
            self.pointer = pointer
        }

        deinit { EVP_MD_CTX_free(pointer) }
    }

    private var context = Context()

    private mutating func unique() -> OpaquePointer {
        if !isKnownUniquelyReferenced(&context) { context = Context(copying: context) }
        return context.pointer
    }

    mutating func update(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return }
        guard EVP_DigestUpdate(unique(), base, bytes.count) == 1 else { fatalError("\(CryptoError(.libraryFailure, operation: "SHA-256"))") }
    }

    mutating func finalize() -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: SHA256.digestLength)
        let pointer = unique()
        let ok = digest.withUnsafeMutableBufferPointer { EVP_DigestFinal_ex(pointer, $0.baseAddress, nil) == 1 }
        guard ok, EVP_DigestInit_ex(pointer, EVP_sha256(), nil) == 1 else { fatalError("\(CryptoError(.libraryFailure, operation: "SHA-256"))") }
        return digest
    }
}
#else
/// CryptoKit's SHA-256 (already a value).
struct DigestState: Sendable {
    private var hasher = CryptoKit.SHA256()

    mutating func update(_ bytes: UnsafeRawBufferPointer) { hasher.update(bufferPointer: bytes) }

    mutating func finalize() -> [UInt8] {
        defer { hasher = CryptoKit.SHA256() }
        return Array(hasher.finalize())
    }
}
#endif
