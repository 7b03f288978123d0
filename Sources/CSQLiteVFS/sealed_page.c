// The page cipher: see sealed_page.h and the "Sealed store pages" DocC article.
#include "sealed_page.h"
#include <pthread.h>
#include <string.h>
#include <stdlib.h>
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/kdf.h>
#include <openssl/params.h>
#include <openssl/rand.h>

static EVP_CIPHER *aesGCM;
static EVP_KDF *hkdf;
static const char sqliteMagic[16] = "SQLite format 3";   // with its NUL: 16 bytes

static void fetchAlgorithms(void) {
    aesGCM = EVP_CIPHER_fetch(NULL, "AES-256-GCM", NULL);
    hkdf = EVP_KDF_fetch(NULL, "HKDF", NULL);
}

int akp_init(void) {
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, fetchAlgorithms);
    return aesGCM && hkdf ? 0 : -1;
}

/// HKDF-SHA256 (RFC 5869) of `key` with `salt` (none when NULL) and `info`, `length` bytes.
static int derive(const unsigned char *key, const unsigned char *salt, size_t saltLength, const char *info,
                  unsigned char *out, size_t length) {
    EVP_KDF_CTX *context = EVP_KDF_CTX_new(hkdf);
    if (!context) return -1;
    OSSL_PARAM params[5], *param = params;
    *param++ = OSSL_PARAM_construct_utf8_string(OSSL_KDF_PARAM_DIGEST, (char *)"SHA256", 0);
    *param++ = OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_KEY, (void *)key, AK_SEALED_KEY_BYTES);
    if (salt) *param++ = OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_SALT, (void *)salt, saltLength);
    *param++ = OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_INFO, (void *)info, strlen(info));
    *param = OSSL_PARAM_construct_end();
    int ok = EVP_KDF_derive(context, out, length, params) == 1;
    EVP_KDF_CTX_free(context);
    return ok ? 0 : -1;
}

int akp_derive(const unsigned char key[AK_SEALED_KEY_BYTES], const unsigned char fileId[AK_FILE_ID_BYTES],
               unsigned char subkey[AK_SEALED_KEY_BYTES]) {
    return derive(key, fileId, AK_FILE_ID_BYTES, "appkernel/sqlite-page/v1", subkey, AK_SEALED_KEY_BYTES);
}

int akp_key_check(const unsigned char key[AK_SEALED_KEY_BYTES], unsigned char check[AK_CHECK_BYTES]) {
    return derive(key, NULL, 0, "appkernel/sqlite-key-check/v1", check, AK_CHECK_BYTES);
}

int akp_valid_page_size(int pageSize) {
    return pageSize >= 512 && pageSize <= 65536 && (pageSize & (pageSize - 1)) == 0;
}

int akp_header_page_size(const unsigned char header[AK_HEADER_CLEAR]) {
    int size = (header[16] << 8) | header[17];
    if (size == 1) size = 65536;
    return akp_valid_page_size(size) && header[20] == AK_SEALED_RESERVE ? size : 0;
}

int akp_all_zero(const unsigned char *bytes, int from, int to) {
    unsigned char any = 0;
    for (int i = from; i < to; i++) any |= bytes[i];
    return any == 0;
}

void akp_cipher_free(ak_cipher *cipher) {
    EVP_CIPHER_CTX_free(cipher->encrypt);
    EVP_CIPHER_CTX_free(cipher->decrypt);
    if (cipher->scratch) {
        OPENSSL_cleanse(cipher->scratch, (size_t)cipher->scratchSize);
        free(cipher->scratch);
    }
    memset(cipher, 0, sizeof *cipher);
}

/// Makes sure the scratch page holds `size` bytes.
static int ensureScratch(ak_cipher *cipher, int size) {
    if (cipher->scratchSize >= size) return 0;
    if (cipher->scratch) {
        OPENSSL_cleanse(cipher->scratch, (size_t)cipher->scratchSize);
        free(cipher->scratch);
    }
    cipher->scratch = malloc((size_t)size);
    cipher->scratchSize = cipher->scratch ? size : 0;
    return cipher->scratch ? 0 : -1;
}

/// The additional data: "AKP1" ‖ pgno (u32 BE) ‖ the format word ‖ (page 1) its clear header.
static int additionalData(EVP_CIPHER_CTX *context, int encrypting, uint32_t pgno, const unsigned char *formatWord,
                          const unsigned char *clearHeader) {
    unsigned char aad[4 + 4 + 4 + AK_HEADER_CLEAR];
    memcpy(aad, "AKP1", 4);
    akp_put32(aad + 4, pgno);
    memcpy(aad + 8, formatWord, 4);
    int length = 12;
    if (clearHeader) {
        memcpy(aad + 12, clearHeader, AK_HEADER_CLEAR);
        length += AK_HEADER_CLEAR;
    }
    int ignored;
    return encrypting ? EVP_EncryptUpdate(context, NULL, &ignored, aad, length) == 1
                      : EVP_DecryptUpdate(context, NULL, &ignored, aad, length) == 1;
}

int akp_seal(ak_cipher *cipher, const unsigned char *subkey, unsigned generation, const unsigned char *identity,
             uint32_t pgno, const unsigned char *plain, unsigned char *out, int pageSize) {
    int usable = pageSize - AK_SEALED_RESERVE, start = pgno == 1 ? AK_HEADER_CLEAR : 0, length = 0;
    if (!cipher->encrypt && !(cipher->encrypt = EVP_CIPHER_CTX_new())) return -1;
    if (cipher->encryptGeneration != generation) {
        if (EVP_EncryptInit_ex(cipher->encrypt, aesGCM, NULL, subkey, NULL) != 1) return -1;
        cipher->encryptGeneration = generation;
    }
    unsigned char *nonce = out + usable, *tag = nonce + AK_NONCE_BYTES, *formatWord = tag + AK_TAG_BYTES;
    if (pgno == 1) {
        memcpy(out, identity, AK_IDENTITY_BYTES);
        memcpy(out + 16, plain + 16, AK_HEADER_CLEAR - 16);
    }
    // NIST SP 800-38D §8.2.2: a 96-bit nonce from the DRBG for every page write.
    if (RAND_bytes(nonce, AK_NONCE_BYTES) != 1) return -1;
    akp_put32(formatWord, AK_FORMAT);
    if (EVP_EncryptInit_ex(cipher->encrypt, NULL, NULL, NULL, nonce) != 1) return -1;
    if (!additionalData(cipher->encrypt, 1, pgno, formatWord, pgno == 1 ? out : NULL)) return -1;
    if (EVP_EncryptUpdate(cipher->encrypt, out + start, &length, plain + start, usable - start) != 1) return -1;
    if (EVP_EncryptFinal_ex(cipher->encrypt, out + start + length, &length) != 1) return -1;
    return EVP_CIPHER_CTX_ctrl(cipher->encrypt, EVP_CTRL_GCM_GET_TAG, AK_TAG_BYTES, tag) == 1 ? 0 : -1;
}

int akp_open(ak_cipher *cipher, const unsigned char *subkey, unsigned generation, uint32_t pgno,
             const unsigned char *disk, unsigned char *out, int pageSize) {
    int usable = pageSize - AK_SEALED_RESERVE, start = pgno == 1 ? AK_HEADER_CLEAR : 0, length = 0, ok = 0;
    const unsigned char *nonce = disk + usable, *tag = nonce + AK_NONCE_BYTES, *formatWord = tag + AK_TAG_BYTES;
    if (ensureScratch(cipher, pageSize) != 0) goto done;
    if (!cipher->decrypt && !(cipher->decrypt = EVP_CIPHER_CTX_new())) goto done;
    if (cipher->decryptGeneration != generation) {
        if (EVP_DecryptInit_ex(cipher->decrypt, aesGCM, NULL, subkey, NULL) != 1) goto done;
        cipher->decryptGeneration = generation;
    }
    if (akp_get32(formatWord) != AK_FORMAT) goto done;
    if (pgno == 1 && (memcmp(disk, AK_MAGIC, AK_MAGIC_BYTES) != 0 || !akp_header_page_size(disk))) goto done;
    if (EVP_DecryptInit_ex(cipher->decrypt, NULL, NULL, NULL, nonce) != 1) goto done;
    if (!additionalData(cipher->decrypt, 0, pgno, formatWord, pgno == 1 ? disk : NULL)) goto done;
    unsigned char *plain = cipher->scratch;
    if (EVP_DecryptUpdate(cipher->decrypt, plain + start, &length, disk + start, usable - start) != 1) goto done;
    if (EVP_CIPHER_CTX_ctrl(cipher->decrypt, EVP_CTRL_GCM_SET_TAG, AK_TAG_BYTES, (void *)tag) != 1) goto done;
    if (EVP_DecryptFinal_ex(cipher->decrypt, plain + start + length, &length) != 1) goto done;
    // The tag verified: only now does the plaintext leave the scratch page.
    if (pgno == 1) {
        memcpy(plain, sqliteMagic, 16);
        memcpy(plain + 16, disk + 16, AK_HEADER_CLEAR - 16);
    }
    memset(plain + usable, 0, AK_SEALED_RESERVE);
    memcpy(out, plain, (size_t)pageSize);
    ok = 1;
done:
    // A page that failed its tag leaves no trace; one that passed is in SQLite's cache anyway
    // (the scratch page is wiped when the file closes).
    if (!ok) {
        if (cipher->scratch) OPENSSL_cleanse(cipher->scratch, (size_t)cipher->scratchSize);
        memset(out, 0, (size_t)pageSize);
    }
    return ok ? 0 : -1;
}
