#if canImport(COpenSSL)
import COpenSSL
#else
import CryptoKit
import CommonCrypto
import Foundation
#if canImport(Darwin)
import Darwin
#endif
#endif

/// The one place Core's cryptography meets a library: the system's libcrypto (OpenSSL 3) on
/// Linux, through the thin C calls of `COpenSSL/shim.h`; CryptoKit and CommonCrypto, which ship
/// with the OS, on Apple platforms. Every call takes raw buffers and returns `false` (or `nil`)
/// on failure; the public types (``AES256GCM``, ``HKDF``, ``SHA256``, ``HMACSHA256``,
/// ``PBKDF2``, ``SecureRandom``) turn that into a ``CryptoError``.
enum LibCrypto {
    /// The name the errors give the library.
    #if canImport(COpenSSL)
    static let name = "libcrypto (OpenSSL 3)"
    #else
    static let name = "CryptoKit"
    #endif

    /// Fills `buffer` from the system's cryptographic generator; `false` if it failed.
    static func random(_ buffer: UnsafeMutableRawBufferPointer) -> Bool {
        guard let base = buffer.baseAddress, buffer.count > 0 else { return true }
        #if canImport(COpenSSL)
        return appkernel_random(base.assumingMemoryBound(to: UInt8.self), buffer.count) == 1
        #else
        arc4random_buf(base, buffer.count)   // never fails on Apple platforms
        return true
        #endif
    }

    /// Overwrites `buffer` with zeros in a way the compiler cannot drop.
    static func cleanse(_ buffer: UnsafeMutableRawBufferPointer) {
        guard let base = buffer.baseAddress, buffer.count > 0 else { return }
        #if canImport(COpenSSL)
        OPENSSL_cleanse(base, buffer.count)
        #else
        _ = memset_s(base, buffer.count, 0, buffer.count)
        #endif
    }

    /// Whether `a` and `b` hold the same bytes, in time that depends only on their length.
    static func constantTimeEqual(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Bool {
        guard a.count == b.count else { return false }
        guard let left = a.baseAddress, let right = b.baseAddress, a.count > 0 else { return true }
        #if canImport(COpenSSL)
        return CRYPTO_memcmp(left, right, a.count) == 0
        #else
        var difference: UInt8 = 0
        for index in 0..<a.count { difference |= left.load(fromByteOffset: index, as: UInt8.self) ^ right.load(fromByteOffset: index, as: UInt8.self) }
        return difference == 0
        #endif
    }

    /// AES-256-GCM: encrypts `plaintext` into `ciphertext` (same length) and writes the tag.
    static func seal(key: UnsafeRawBufferPointer, nonce: UnsafeRawBufferPointer, aad: UnsafeRawBufferPointer,
                     plaintext: UnsafeRawBufferPointer, ciphertext: UnsafeMutableRawBufferPointer,
                     tag: UnsafeMutableRawBufferPointer) -> Bool {
        #if canImport(COpenSSL)
        return appkernel_aes256gcm_seal(key.bytes, nonce.bytes, aad.bytes, aad.count, plaintext.bytes, plaintext.count,
                                        ciphertext.mutableBytes, tag.mutableBytes) == 1
        #else
        guard let box = try? AES.GCM.seal(Data(plaintext), using: SymmetricKey(data: Data(key)), nonce: AES.GCM.Nonce(data: Data(nonce)),
                                          authenticating: Data(aad)) else { return false }
        ciphertext.copyBytes(from: box.ciphertext)
        tag.copyBytes(from: box.tag)
        return true
        #endif
    }

    /// AES-256-GCM: `true` only if `tag` verifies; `plaintext` is then the decryption. On
    /// `false` `plaintext` holds zeros: nothing that failed its tag is left in it.
    static func open(key: UnsafeRawBufferPointer, nonce: UnsafeRawBufferPointer, aad: UnsafeRawBufferPointer,
                     ciphertext: UnsafeRawBufferPointer, tag: UnsafeRawBufferPointer,
                     plaintext: UnsafeMutableRawBufferPointer) -> Bool {
        #if canImport(COpenSSL)
        return appkernel_aes256gcm_open(key.bytes, nonce.bytes, aad.bytes, aad.count, ciphertext.bytes, ciphertext.count,
                                        tag.bytes, plaintext.mutableBytes) == 1
        #else
        guard let box = try? AES.GCM.SealedBox(nonce: AES.GCM.Nonce(data: Data(nonce)), ciphertext: Data(ciphertext), tag: Data(tag)),
              let opened = try? AES.GCM.open(box, using: SymmetricKey(data: Data(key)), authenticating: Data(aad)) else { return false }
        plaintext.copyBytes(from: opened)
        return true
        #endif
    }

    /// HKDF-SHA256 (RFC 5869) into `output`.
    static func hkdf(ikm: UnsafeRawBufferPointer, salt: UnsafeRawBufferPointer, info: UnsafeRawBufferPointer,
                     output: UnsafeMutableRawBufferPointer) -> Bool {
        #if canImport(COpenSSL)
        return appkernel_hkdf_sha256(ikm.bytes, ikm.count, salt.bytes, salt.count, info.bytes, info.count,
                                     output.mutableBytes, output.count) == 1
        #else
        let key = CryptoKit.HKDF<CryptoKit.SHA256>.deriveKey(inputKeyMaterial: SymmetricKey(data: Data(ikm)), salt: Data(salt),
                                                             info: Data(info), outputByteCount: output.count)
        key.withUnsafeBytes { output.copyMemory(from: $0) }
        return true
        #endif
    }

    /// HMAC-SHA256 of `data` under `key` into the 32 bytes of `output`.
    static func hmac(key: UnsafeRawBufferPointer, data: UnsafeRawBufferPointer, output: UnsafeMutableRawBufferPointer) -> Bool {
        #if canImport(COpenSSL)
        return appkernel_hmac_sha256(key.bytes, key.count, data.bytes, data.count, output.mutableBytes) == 1
        #else
        let code = CryptoKit.HMAC<CryptoKit.SHA256>.authenticationCode(for: Data(data), using: SymmetricKey(data: Data(key)))
        code.withUnsafeBytes { output.copyMemory(from: $0) }
        return true
        #endif
    }

    /// PBKDF2-HMAC-SHA256 (RFC 8018) into `output`.
    static func pbkdf2(password: UnsafeRawBufferPointer, salt: UnsafeRawBufferPointer, iterations: Int,
                       output: UnsafeMutableRawBufferPointer) -> Bool {
        guard iterations >= 1, iterations <= Int(Int32.max) else { return false }
        #if canImport(COpenSSL)
        return appkernel_pbkdf2_sha256(password.bytes, password.count, salt.bytes, salt.count, Int32(iterations),
                                       output.mutableBytes, output.count) == 1
        #else
        let status = CCKeyDerivationPBKDF(CCPBKDFAlgorithm(kCCPBKDF2), password.baseAddress?.assumingMemoryBound(to: CChar.self),
                                          password.count, salt.bytes, salt.count, CCPseudoRandomAlgorithm(kCCPRFHmacAlgSHA256),
                                          UInt32(iterations), output.mutableBytes, output.count)
        return status == Int32(kCCSuccess)
        #endif
    }
}

extension UnsafeRawBufferPointer {
    /// The bytes as a C `const uint8_t *` (`nil` when empty; the C side accepts that).
    var bytes: UnsafePointer<UInt8>? { baseAddress?.assumingMemoryBound(to: UInt8.self) }
}

extension UnsafeMutableRawBufferPointer {
    /// The bytes as a C `uint8_t *` (`nil` when empty; the C side accepts that).
    var mutableBytes: UnsafeMutablePointer<UInt8>? { baseAddress?.assumingMemoryBound(to: UInt8.self) }
}
