// Opening through the sealed VFS, and reading a file's kind without SQLite (the probe).
#include "appkernel_sealed_vfs.h"
#include "sealed_page.h"
#include "sealed_vfs_internal.h"
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <openssl/crypto.h>

/// Writes page 1 of an empty database (with our reserve) under a write lock, so that its
/// identity is on disk before any WAL or journal holds a page; a no-op when another connection
/// did it first.
static int initializeEmpty(sqlite3 *db) {
    sqlite3_file *file = NULL;
    sqlite3_int64 size = -1;
    if (sqlite3_file_control(db, "main", SQLITE_FCNTL_FILE_POINTER, &file) != SQLITE_OK || !file) return SQLITE_ERROR;
    if (file->pMethods->xFileSize(file, &size) != SQLITE_OK || size > 0) return SQLITE_OK;
    int reserve = AK_SEALED_RESERVE;
    sqlite3_file_control(db, "main", SQLITE_FCNTL_RESERVE_BYTES, &reserve);
    int rc = sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL);
    if (rc != SQLITE_OK) return rc;
    if (file->pMethods->xFileSize(file, &size) == SQLITE_OK && size == 0) {
        rc = sqlite3_exec(db, "PRAGMA user_version = 0", NULL, NULL, NULL);
    }
    if (rc == SQLITE_OK) return sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
    sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
    return rc;
}

int ak_sealed_open(const char *path, const unsigned char *key, int flags, int busyMilliseconds, sqlite3 **db) {
    *db = NULL;
    int rc = ak_sealed_register();
    if (rc != SQLITE_OK) return rc;
    if (!key) return SQLITE_MISUSE;
    akPendingKey = key;
    rc = sqlite3_open_v2(path, db, flags, AK_SEALED_VFS_NAME);
    akPendingKey = NULL;
    if (rc != SQLITE_OK) return rc;
    sqlite3_busy_timeout(*db, busyMilliseconds);
    rc = sqlite3_exec(*db, "PRAGMA temp_store = MEMORY", NULL, NULL, NULL);
    if (rc == SQLITE_OK && !(flags & SQLITE_OPEN_READONLY)) rc = initializeEmpty(*db);
    return rc;
}

void ak_sealed_cleanse(void *bytes, size_t count) { OPENSSL_cleanse(bytes, count); }

/// Reads exactly `count` bytes at `offset`; 0, or -1 when the file is shorter or unreadable.
static int readAt(int descriptor, unsigned char *buffer, size_t count, off_t offset) {
    size_t done = 0;
    while (done < count) {
        ssize_t got = pread(descriptor, buffer + done, count - done, offset + (off_t)done);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) return -1;
        done += (size_t)got;
    }
    return 0;
}

/// Whether page `pgno` of the file opens with `subkey`.
static int pageOpens(int descriptor, const unsigned char *subkey, uint32_t pgno, unsigned char *page, int pageSize) {
    ak_cipher cipher = {0};
    int ok = readAt(descriptor, page, (size_t)pageSize, (off_t)(pgno - 1) * pageSize) == 0
        && akp_open(&cipher, subkey, 1, pgno, page, page, pageSize) == 0;
    akp_cipher_free(&cipher);
    OPENSSL_cleanse(page, (size_t)pageSize);
    return ok;
}

ak_probe_result ak_sealed_probe(const char *path, const unsigned char *key) {
    if (akp_init() != 0) return AK_PROBE_UNREADABLE;
    int descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (descriptor < 0) return errno == ENOENT ? AK_PROBE_EMPTY : AK_PROBE_UNREADABLE;
    unsigned char header[AK_HEADER_CLEAR];
    ak_probe_result result;
    off_t size = lseek(descriptor, 0, SEEK_END);
    if (size == 0) {
        result = AK_PROBE_EMPTY;
    } else if (size < 0) {
        result = AK_PROBE_UNREADABLE;
    } else if (size >= 16 && readAt(descriptor, header, 16, 0) == 0 && memcmp(header, "SQLite format 3", 16) == 0) {
        result = AK_PROBE_PLAINTEXT;
    } else if (size < AK_HEADER_CLEAR || readAt(descriptor, header, AK_HEADER_CLEAR, 0) != 0
               || memcmp(header, AK_MAGIC, AK_MAGIC_BYTES) != 0) {
        result = AK_PROBE_FOREIGN;
    } else if (!key) {
        result = AK_PROBE_SEALED_UNCHECKED;
    } else {
        int pageSize = akp_header_page_size(header);
        unsigned char subkey[AK_SEALED_KEY_BYTES], check[AK_CHECK_BYTES];
        unsigned char *page = pageSize ? malloc((size_t)pageSize) : NULL;
        if (akp_key_check(key, check) != 0) {
            result = AK_PROBE_UNREADABLE;
        } else if (memcmp(check, header + AK_MAGIC_BYTES, AK_CHECK_BYTES) != 0) {
            result = AK_PROBE_WRONG_KEY;
        } else if (!pageSize || size < pageSize) {
            result = AK_PROBE_DAMAGED;
        } else if (!page || akp_derive(key, header + AK_FILE_ID_OFFSET, subkey) != 0) {
            result = AK_PROBE_UNREADABLE;
        } else {
            // The key is the file's: a page 1 that fails its tag is damaged.
            result = pageOpens(descriptor, subkey, 1, page, pageSize) ? AK_PROBE_SEALED : AK_PROBE_DAMAGED;
        }
        OPENSSL_cleanse(subkey, sizeof subkey);
        free(page);
    }
    close(descriptor);
    return result;
}
