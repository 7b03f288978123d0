import Foundation
#if canImport(COpenSSL)
import COpenSSL

/// An OpenSSL client context (`SSL_CTX`): TLS 1.2 or later, the peer verified against the
/// system's trust store (and any certificates the transport was given), shared by every
/// connection of one ``SocketTransport``.
///
/// `@unchecked Sendable`: OpenSSL makes a context safe to share between threads once it is set
/// up, which `init` finishes before anyone else sees it; it is never changed afterwards.
final class TLSContext: @unchecked Sendable {
    let pointer: OpaquePointer

    /// Creates a context trusting the system's roots and `certificates` (PEM, each blob one or
    /// more `BEGIN CERTIFICATE` blocks).
    /// - Throws: A sentence naming what failed (a blob that holds no certificate).
    init(trusting certificates: [Data]) throws(TransferFailure) {
        guard let context = SSL_CTX_new(TLS_client_method()) else {
            throw .failed(.tlsFailed, "OpenSSL could not create a TLS context: \(TLSContext.errorQueue())")
        }
        pointer = context
        SSL_CTX_set_verify(context, SSL_VERIFY_PEER, nil)
        _ = appkernel_SSL_CTX_set_min_version(context, TLS1_2_VERSION)
        // The system's trust store (/etc/ssl/certs on Debian and Ubuntu); a missing one leaves
        // nothing trusted, so every handshake fails closed.
        _ = SSL_CTX_set_default_verify_paths(context)
        let store = SSL_CTX_get_cert_store(context)
        for (index, blob) in certificates.enumerated() {
            var added = 0
            blob.withUnsafeBytes { bytes in
                guard let bio = BIO_new_mem_buf(bytes.baseAddress, Int32(bytes.count)) else { return }
                defer { BIO_free(bio) }
                while let certificate = PEM_read_bio_X509(bio, nil, nil, nil) {
                    if X509_STORE_add_cert(store, certificate) == 1 { added += 1 }
                    X509_free(certificate)
                }
            }
            ERR_clear_error()       // the end of the blob reads as "no start line"
            guard added > 0 else {
                throw .failed(.invalidRequest, "trusted certificate \(index + 1) holds no PEM certificate (-----BEGIN CERTIFICATE-----)")
            }
        }
    }

    deinit { SSL_CTX_free(pointer) }

    /// OpenSSL's queued errors, oldest first, as one line; the queue is emptied.
    static func errorQueue() -> String {
        var messages: [String] = []
        while case let code = ERR_get_error(), code != 0 {
            var buffer = [CChar](repeating: 0, count: 256)
            ERR_error_string_n(code, &buffer, buffer.count)
            messages.append(String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
        return messages.isEmpty ? "no detail from OpenSSL" : messages.joined(separator: "; ")
    }
}
#endif
