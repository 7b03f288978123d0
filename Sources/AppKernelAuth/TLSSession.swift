import Foundation
#if canImport(COpenSSL)
import COpenSSL

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
