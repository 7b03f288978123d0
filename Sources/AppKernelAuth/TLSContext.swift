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

/// One connection's TLS state: an `SSL` whose records go through two memory BIOs, so that the
/// socket's I/O stays with ``SocketConnection`` (non-blocking, with its deadline and
/// cancellation, and no `SIGPIPE`: OpenSSL never touches the socket).
final class TLSSession {
    let ssl: OpaquePointer
    /// Records from the server, for OpenSSL to read.
    let input: OpaquePointer
    /// Records for the server, written by OpenSSL.
    let output: OpaquePointer

    /// Prepares a client session for `host`: SNI (for a name) and the name or address the
    /// certificate must carry.
    init(context: TLSContext, host: String) throws(TransferFailure) {
        guard let ssl = SSL_new(context.pointer), let input = BIO_new(BIO_s_mem()), let output = BIO_new(BIO_s_mem()) else {
            throw .failed(.tlsFailed, "OpenSSL could not create a TLS session: \(TLSContext.errorQueue())")
        }
        self.ssl = ssl
        self.input = input
        self.output = output
        appkernel_BIO_set_mem_eof_return(input, -1)       // an empty input means "wait for more"
        SSL_set_bio(ssl, input, output)                   // the session owns both from now on
        SSL_set_connect_state(ssl)
        let isAddress = host.contains(":") || host.split(separator: ".").count == 4 && host.allSatisfy { $0.isNumber || $0 == "." }
        if isAddress {
            guard X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), host) == 1 else {
                throw .failed(.invalidRequest, "\(host) is not an IP address OpenSSL can check a certificate against")
            }
        } else {
            guard appkernel_SSL_set_server_name(ssl, host) == 1, SSL_set1_host(ssl, host) == 1 else {
                throw .failed(.invalidRequest, "\(host) cannot be used as a TLS server name: \(TLSContext.errorQueue())")
            }
        }
    }

    deinit { SSL_free(ssl) }

    /// Why the handshake failed: the certificate's verification result, else OpenSSL's errors.
    func handshakeFailure(host: String) -> TransferFailure {
        let verdict = SSL_get_verify_result(ssl)
        if verdict != X509_V_OK {
            let reason = String(cString: X509_verify_cert_error_string(verdict))
            return .failed(.certificateRejected, "the server's certificate was refused (\(reason), for host \(host)); nothing was sent. "
                + "Use the server's real name, or have its certificate signed by a trusted authority "
                + "(for a test server: SocketTransport(trustedCertificates:))")
        }
        return .failed(.tlsFailed, "the TLS handshake with \(host) failed: \(TLSContext.errorQueue())")
    }
}
#endif
