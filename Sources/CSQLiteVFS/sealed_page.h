// The page cipher of the sealed VFS (internal): AES-256-GCM over one page, a random 96-bit nonce
// and the tag in the page's last AK_SEALED_RESERVE bytes, a subkey per database file.
#ifndef APPKERNEL_SEALED_PAGE_H
#define APPKERNEL_SEALED_PAGE_H

#include <stdint.h>
#include <stddef.h>
#include <openssl/evp.h>
#include "appkernel_sealed_vfs.h"

/// Page 1's first 16 bytes on disk (instead of "SQLite format 3\0"): the magic, the key check
/// (which key the file is sealed with), the random file id (which file a page belongs to).
#define AK_MAGIC "AKS1"
#define AK_MAGIC_BYTES 4
#define AK_CHECK_BYTES 4
#define AK_FILE_ID_OFFSET 8
#define AK_FILE_ID_BYTES 8
#define AK_IDENTITY_BYTES 16
/// Page 1's bytes [0, AK_HEADER_CLEAR) are stored in clear: magic, file id, SQLite's 16–23.
#define AK_HEADER_CLEAR 24
#define AK_NONCE_BYTES 12
#define AK_TAG_BYTES 16
/// The format number in each page's last 4 bytes.
#define AK_FORMAT 1u

/// One direction's cipher state: the context keyed with a subkey of a given generation, and a
/// scratch page the plaintext is decrypted into before its tag is known.
typedef struct {
    EVP_CIPHER_CTX *encrypt;
    EVP_CIPHER_CTX *decrypt;
    unsigned encryptGeneration;
    unsigned decryptGeneration;
    unsigned char *scratch;
    int scratchSize;
} ak_cipher;

/// Fetches AES-256-GCM and HKDF once; 0 on success.
int akp_init(void);
/// The page subkey: HKDF-SHA256(key, salt = file id, info = "appkernel/sqlite-page/v1").
int akp_derive(const unsigned char key[AK_SEALED_KEY_BYTES], const unsigned char fileId[AK_FILE_ID_BYTES],
               unsigned char subkey[AK_SEALED_KEY_BYTES]);
/// The key check: HKDF-SHA256(key, no salt, info = "appkernel/sqlite-key-check/v1"), 4 bytes.
/// Tells a wrong key from a damaged file before any page is decrypted.
int akp_key_check(const unsigned char key[AK_SEALED_KEY_BYTES], unsigned char check[AK_CHECK_BYTES]);
/// Whether `pageSize` is one SQLite allows (a power of two, 512…65536).
int akp_valid_page_size(int pageSize);
/// The page size in a sealed page 1 header (bytes 16–17, 1 meaning 65536), 0 when invalid.
int akp_header_page_size(const unsigned char header[AK_HEADER_CLEAR]);
/// Whether [from, to) of `bytes` is all zeros.
int akp_all_zero(const unsigned char *bytes, int from, int to);

void akp_cipher_free(ak_cipher *cipher);
/// Encrypts SQLite's page `plain` (P bytes, its reserve all zeros) as page `pgno` into `out`
/// (P bytes). Page 1: `out` starts with `identity` (magic, key check, file id) and `plain`'s
/// bytes 16–23, in clear.
/// 0 on success.
int akp_seal(ak_cipher *cipher, const unsigned char *subkey, unsigned generation, const unsigned char *identity,
             uint32_t pgno, const unsigned char *plain, unsigned char *out, int pageSize);
/// Decrypts the sealed page `disk` (P bytes) as page `pgno` into `out` (P bytes; may be `disk`).
/// Only a page whose tag verifies reaches `out`: on failure `out` is zeroed and -1 returned.
/// Page 1 comes back with "SQLite format 3\0" and its clear bytes 16–23; every page with its
/// reserve as zeros (as SQLite wrote it).
int akp_open(ak_cipher *cipher, const unsigned char *subkey, unsigned generation, uint32_t pgno,
             const unsigned char *disk, unsigned char *out, int pageSize);

static inline uint32_t akp_get32(const unsigned char *p) {
    return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | (uint32_t)p[3];
}
static inline void akp_put32(unsigned char *p, uint32_t v) {
    p[0] = (unsigned char)(v >> 24); p[1] = (unsigned char)(v >> 16); p[2] = (unsigned char)(v >> 8); p[3] = (unsigned char)v;
}

#endif
