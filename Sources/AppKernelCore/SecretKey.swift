/// A 256-bit symmetric key, held in memory of its own that is overwritten (`OPENSSL_cleanse`)
/// when the last copy goes away — never in a Swift array that could be copied around and freed
/// with the key still in it.
///
/// Its ``id`` names it without revealing it: a sealed file records the id of the key it was
/// sealed with, so a wrong key is told apart from damage.
///
/// ```swift
/// let key = try SecretKey.random()
/// let box = try AES256GCM.seal(Array("secret".utf8), using: key)
/// ```
public final class SecretKey: Sendable, CustomStringConvertible {
    /// The key's length in bytes.
    public static let byteCount = 32
    /// The length of ``id`` in bytes.
    public static let idByteCount = 16

    /// Allocated once, written once in `init`, read-only until `deinit` overwrites and frees it:
    /// safe to share between threads.
    nonisolated(unsafe) private let storage: UnsafeMutableRawBufferPointer
    /// A name for the key that does not reveal it: the first 16 bytes of
    /// HKDF-SHA256(key, info: "AppKernel key id v1").
    public let id: [UInt8]

    /// A key holding a copy of `bytes`.
    /// - Throws: ``CryptoError/Code/invalidKeyLength(count:expected:)`` unless `bytes` holds 32 bytes.
    public convenience init(bytes: some Collection<UInt8>) throws(CryptoError) {
        guard bytes.count == Self.byteCount else {
            throw CryptoError(.invalidKeyLength(count: bytes.count, expected: Self.byteCount), operation: "a secret key")
        }
        try self.init { buffer in buffer.copyBytes(from: bytes) }
    }

    /// A new key from the system's random generator.
    /// - Throws: ``CryptoError/Code/randomUnavailable`` if the generator failed.
    public static func random() throws(CryptoError) -> SecretKey {
        try SecretKey { (buffer) throws(CryptoError) in try SecureRandom.fill(buffer) }
    }

    init(filling fill: (UnsafeMutableRawBufferPointer) throws(CryptoError) -> Void) throws(CryptoError) {
        let storage = UnsafeMutableRawBufferPointer.allocate(byteCount: Self.byteCount, alignment: 16)
        do throws(CryptoError) {
            try fill(storage)
            var id = [UInt8](repeating: 0, count: Self.idByteCount)
            let info = Array("AppKernel key id v1".utf8)
            let ok = info.withUnsafeBytes { info in
                id.withUnsafeMutableBytes { LibCrypto.hkdf(ikm: UnsafeRawBufferPointer(storage), salt: UnsafeRawBufferPointer(start: nil, count: 0), info: info, output: $0) }
            }
            guard ok else { throw CryptoError(.libraryFailure, operation: "HKDF-SHA256 (key id)") }
            self.storage = storage
            self.id = id
        } catch {
            LibCrypto.cleanse(storage)
            storage.deallocate()
            throw error
        }
    }

    deinit {
        LibCrypto.cleanse(storage)
        storage.deallocate()
    }

    /// Calls `body` with the key's bytes, for the duration of the call only.
    public func withUnsafeBytes<Result, Failure: Error>(_ body: (UnsafeRawBufferPointer) throws(Failure) -> Result) throws(Failure) -> Result {
        try body(UnsafeRawBufferPointer(storage))
    }

    /// The key's ``id`` in hex; never the key.
    public var description: String { "SecretKey(id: \(id.hexDigits))" }
}

extension Sequence<UInt8> {
    /// Lower-case hexadecimal, for names and messages.
    var hexDigits: String {
        let digits = Array("0123456789abcdef".utf8)
        return String(decoding: flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 0x0f)]] }, as: UTF8.self)
    }
}
