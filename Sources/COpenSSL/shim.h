// The system's OpenSSL 3 (libssl and libcrypto; headers from libssl-dev on Debian and Ubuntu).
// A system library, not a package: AppKernel keeps no dependencies. AppKernelAuth's
// SocketTransport speaks TLS through libssl; AppKernelCore's cryptography (AES-256-GCM, HKDF,
// SHA-256, HMAC, PBKDF2, random bytes) comes from libcrypto.
//
// Some of OpenSSL's calls are macros over SSL_ctrl, which Swift cannot import, and some of its
// constants are aliases of other macros, which Swift imports unreliably: the inline functions
// below give Swift plain calls (pointers, sizes, and 1 for success, 0 for failure).
#ifndef APPKERNEL_COPENSSL_SHIM_H
#define APPKERNEL_COPENSSL_SHIM_H

#include <openssl/ssl.h>
#include <openssl/err.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <openssl/pem.h>
#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/kdf.h>
#include <openssl/core_names.h>
#include <openssl/params.h>
#include <openssl/rand.h>
#include <openssl/crypto.h>
#include <openssl/hmac.h>
#include <limits.h>
#include <string.h>
#include <stdint.h>
#include <stddef.h>

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

// MARK: Cryptography (AppKernelCore)

/// A non-null pointer for an empty input (OpenSSL refuses some NULL inputs even of length 0).
static inline const uint8_t *appkernel_nonnull(const uint8_t *bytes) {
    static const uint8_t empty = 0;
    return bytes != NULL ? bytes : &empty;
}

/// AES-256-GCM encryption: `key` 32 bytes, `nonce` 12 bytes; writes `length` bytes of
/// ciphertext to `ciphertext` and the 16-byte tag to `tag`. 1 on success, 0 on failure.
static inline int appkernel_aes256gcm_seal(const uint8_t *key, const uint8_t *nonce,
                                           const uint8_t *aad, size_t aadLength,
                                           const uint8_t *plaintext, size_t length,
                                           uint8_t *ciphertext, uint8_t *tag) {
    if (length > INT_MAX || aadLength > INT_MAX) return 0;
    EVP_CIPHER_CTX *context = EVP_CIPHER_CTX_new();
    if (context == NULL) return 0;
    uint8_t scratch[16];
    int written = 0, ok = EVP_EncryptInit_ex(context, EVP_aes_256_gcm(), NULL, key, nonce) == 1;
    if (ok && aadLength > 0) ok = EVP_EncryptUpdate(context, NULL, &written, aad, (int)aadLength) == 1;
    if (ok && length > 0) ok = EVP_EncryptUpdate(context, ciphertext, &written, plaintext, (int)length) == 1 && (size_t)written == length;
    if (ok) ok = EVP_EncryptFinal_ex(context, scratch, &written) == 1 && written == 0;
    if (ok) ok = EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_AEAD_GET_TAG, 16, tag) == 1;
    EVP_CIPHER_CTX_free(context);
    return ok;
}

/// AES-256-GCM decryption: 1 only if the 16-byte `tag` verifies over `aad` and `ciphertext`.
/// On failure every byte of `plaintext` is overwritten (OPENSSL_cleanse): nothing that failed
/// its tag is left in memory.
static inline int appkernel_aes256gcm_open(const uint8_t *key, const uint8_t *nonce,
                                           const uint8_t *aad, size_t aadLength,
                                           const uint8_t *ciphertext, size_t length,
                                           const uint8_t *tag, uint8_t *plaintext) {
    if (length > INT_MAX || aadLength > INT_MAX) return 0;
    EVP_CIPHER_CTX *context = EVP_CIPHER_CTX_new();
    if (context == NULL) return 0;
    uint8_t tagCopy[16];
    memcpy(tagCopy, tag, 16);
    uint8_t scratch[16];
    int written = 0, ok = EVP_DecryptInit_ex(context, EVP_aes_256_gcm(), NULL, key, nonce) == 1;
    if (ok && aadLength > 0) ok = EVP_DecryptUpdate(context, NULL, &written, aad, (int)aadLength) == 1;
    if (ok && length > 0) ok = EVP_DecryptUpdate(context, plaintext, &written, ciphertext, (int)length) == 1 && (size_t)written == length;
    if (ok) ok = EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_AEAD_SET_TAG, 16, tagCopy) == 1;
    if (ok) ok = EVP_DecryptFinal_ex(context, scratch, &written) > 0;
    EVP_CIPHER_CTX_free(context);
    if (!ok && length > 0) OPENSSL_cleanse(plaintext, length);
    return ok;
}

/// HKDF-SHA256 (RFC 5869, extract then expand) into `output` (at most 255 × 32 bytes).
static inline int appkernel_hkdf_sha256(const uint8_t *ikm, size_t ikmLength,
                                        const uint8_t *salt, size_t saltLength,
                                        const uint8_t *info, size_t infoLength,
                                        uint8_t *output, size_t outputLength) {
    EVP_KDF *kdf = EVP_KDF_fetch(NULL, "HKDF", NULL);
    if (kdf == NULL) return 0;
    EVP_KDF_CTX *context = EVP_KDF_CTX_new(kdf);
    EVP_KDF_free(kdf);
    if (context == NULL) return 0;
    OSSL_PARAM params[5];
    size_t count = 0;
    params[count++] = OSSL_PARAM_construct_utf8_string(OSSL_KDF_PARAM_DIGEST, (char *)"SHA256", 0);
    params[count++] = OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_KEY, (void *)appkernel_nonnull(ikm), ikmLength);
    if (saltLength > 0) params[count++] = OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_SALT, (void *)salt, saltLength);
    if (infoLength > 0) params[count++] = OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_INFO, (void *)info, infoLength);
    params[count] = OSSL_PARAM_construct_end();
    int ok = EVP_KDF_derive(context, output, outputLength, params) == 1;
    EVP_KDF_CTX_free(context);
    return ok;
}

/// HMAC-SHA256 of `data` under `key` into the 32 bytes at `output`.
static inline int appkernel_hmac_sha256(const uint8_t *key, size_t keyLength,
                                        const uint8_t *data, size_t dataLength, uint8_t *output) {
    if (keyLength > INT_MAX) return 0;
    unsigned int outputLength = 0;
    return HMAC(EVP_sha256(), appkernel_nonnull(key), (int)keyLength, appkernel_nonnull(data), dataLength,
                output, &outputLength) != NULL && outputLength == 32;
}

/// PBKDF2-HMAC-SHA256 (RFC 8018 §5.2) into `output`.
static inline int appkernel_pbkdf2_sha256(const uint8_t *password, size_t passwordLength,
                                          const uint8_t *salt, size_t saltLength,
                                          int iterations, uint8_t *output, size_t outputLength) {
    if (passwordLength > INT_MAX || saltLength > INT_MAX || outputLength > INT_MAX) return 0;
    return PKCS5_PBKDF2_HMAC((const char *)appkernel_nonnull(password), (int)passwordLength,
                             appkernel_nonnull(salt), (int)saltLength, iterations, EVP_sha256(),
                             (int)outputLength, output) == 1;
}

/// `length` bytes from OpenSSL's generator (a DRBG seeded by the kernel); 1 on success.
static inline int appkernel_random(uint8_t *output, size_t length) {
    while (length > 0) {
        int chunk = length > INT_MAX ? INT_MAX : (int)length;
        if (RAND_bytes(output, chunk) != 1) return 0;
        output += chunk;
        length -= (size_t)chunk;
    }
    return 1;
}

#endif
