// The system's OpenSSL 3 (libssl and libcrypto; headers from libssl-dev on Debian and Ubuntu).
// A system library, not a package: AppKernel keeps no dependencies. AppKernelAuth's
// SocketTransport speaks TLS through libssl; libcrypto is here for whoever needs its digests.
//
// Some of OpenSSL's calls are macros over SSL_ctrl, which Swift cannot import: the inline
// functions below give them names Swift can call.
#ifndef APPKERNEL_COPENSSL_SHIM_H
#define APPKERNEL_COPENSSL_SHIM_H

#include <openssl/ssl.h>
#include <openssl/err.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <openssl/pem.h>
#include <openssl/bio.h>
#include <openssl/evp.h>

/// SSL_set_tlsext_host_name: the server name (SNI) the client announces.
static inline int appkernel_SSL_set_server_name(SSL *ssl, const char *name) {
    return (int)SSL_set_tlsext_host_name(ssl, name);
}

/// SSL_CTX_set_min_proto_version.
static inline int appkernel_SSL_CTX_set_min_version(SSL_CTX *context, int version) {
    return (int)SSL_CTX_set_min_proto_version(context, version);
}

/// BIO_pending: bytes waiting in a memory BIO.
static inline long appkernel_BIO_pending(BIO *bio) {
    return (long)BIO_pending(bio);
}

/// BIO_set_mem_eof_return: what reading an empty memory BIO returns (-1: retry later).
static inline void appkernel_BIO_set_mem_eof_return(BIO *bio, int value) {
    (void)BIO_set_mem_eof_return(bio, value);
}

#endif
