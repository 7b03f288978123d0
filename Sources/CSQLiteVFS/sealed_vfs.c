// The sealed VFS: a shim over the default VFS that encrypts every page of a database, its WAL
// and its rollback journal (see sealed_page.h for the cipher, the DocC article for the format).
// Structure after SQLite's ext/misc/cksumvfs.c (read, not copied): our file struct first, the
// real file right after it in the same allocation; every method unwraps to the real file.
//
// SQLite's accesses, by file (fileformat2 §3–4, src/pager.c, src/wal.c):
// - database: whole aligned pages, and sub-page reads of page 1 (100 bytes at 0 at open,
//   16 at 24 for the change counter) — served by decrypting the whole page.
// - WAL: the 32-byte header and the 24-byte frame headers in clear (SQLite's metadata: page
//   numbers, salts, checksums); the page after each frame header sealed as its page number.
//   Recovery reads whole frames: a frame whose page fails its tag comes back zeroed, so SQLite's
//   checksum ends the log there, as it does for a torn frame without encryption.
// - journal: page records (4-byte page number, page, 4-byte checksum) with the page sealed;
//   headers (whose bytes past 28 are zeros) in clear; anything else is refused.
// The WAL and journal live under other names ("-swal", "-sjournal"), so a plain SQLite that
// meets the database never sees (and never deletes or plays back) them.
#include "appkernel_sealed_vfs.h"
#include "sealed_page.h"
#include "sealed_vfs_internal.h"
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <openssl/crypto.h>
#include <openssl/rand.h>

#ifndef SQLITE_IOCAP_SUBPAGE_READ
#define SQLITE_IOCAP_SUBPAGE_READ 0x00008000
#endif

_Thread_local const unsigned char *akPendingKey;

static sqlite3_vfs sealedVFS;
static sqlite3_io_methods sealedMethods;

static sqlite3_vfs *origVFS(sqlite3_vfs *vfs) { return (sqlite3_vfs *)vfs->pAppData; }

int akv_ensurePage(SealedFile *file, int size) {
    if (file->pageCapacity >= size) return 0;
    if (file->page) {
        OPENSSL_cleanse(file->page, (size_t)file->pageCapacity);
        free(file->page);
    }
    file->page = malloc((size_t)size);
    file->pageCapacity = file->page ? size : 0;
    return file->page ? 0 : -1;
}

/// Takes the file id (and page size) from page 1's clear header on disk; re-derives the subkey
/// when the id changed. SQLITE_OK, SQLITE_IOERR_SHORT_READ (no header yet), SQLITE_NOTADB.
static int loadHeader(SealedFile *main) {
    unsigned char header[AK_HEADER_CLEAR];
    sqlite3_file *real = akv_realFile(&main->base);
    int rc = real->pMethods->xRead(real, header, AK_HEADER_CLEAR, 0);
    if (rc == SQLITE_IOERR_SHORT_READ) {
        // Empty (or shorter than a header: SQLite reads it as empty or fails on it itself).
        return main->state == MAIN_SEALED ? SQLITE_NOTADB : SQLITE_IOERR_SHORT_READ;
    }
    if (rc != SQLITE_OK) return rc;
    int pageSize = akp_header_page_size(header);
    // Another kind of file, or sealed with another key: nothing is decrypted, nothing written.
    if (memcmp(header, main->identity, AK_MAGIC_BYTES + AK_CHECK_BYTES) != 0 || !pageSize) {
        if (memcmp(header, AK_MAGIC, AK_MAGIC_BYTES) == 0) sqlite3_log(SQLITE_NOTADB, "sealed VFS: the file is sealed with another key");
        main->state = MAIN_NOT_OURS;
        return SQLITE_NOTADB;
    }
    main->pageSize = pageSize;
    if (main->state != MAIN_SEALED || memcmp(main->identity, header, AK_IDENTITY_BYTES) != 0) {
        memcpy(main->identity, header, AK_IDENTITY_BYTES);
        if (akp_derive(main->key, main->identity + AK_FILE_ID_OFFSET, main->subkey) != 0) return SQLITE_IOERR;
        main->generation++;
    }
    main->state = MAIN_SEALED;
    return SQLITE_OK;
}

/// A WAL or journal needs the database's identity on disk before it holds a page.
int akv_ensureIdentity(SealedFile *main) {
    if (main->state == MAIN_SEALED) return SQLITE_OK;
    int rc = loadHeader(main);
    return rc == SQLITE_OK ? SQLITE_OK : (rc == SQLITE_IOERR_SHORT_READ ? SQLITE_IOERR_WRITE : rc);
}

// MARK: Database file

/// Reads page `pgno` (P bytes) into `out`, decrypted. A page past the end: zeros and
/// SQLITE_IOERR_SHORT_READ, as the unix VFS answers; a page cut short: SQLITE_IOERR_DATA.
static int readMainPage(SealedFile *file, uint32_t pgno, unsigned char *out) {
    int pageSize = file->pageSize;
    sqlite3_file *real = akv_realFile(&file->base);
    sqlite3_int64 offset = (sqlite3_int64)(pgno - 1) * pageSize;
    int rc = real->pMethods->xRead(real, out, pageSize, offset);
    if (rc == SQLITE_IOERR_SHORT_READ) {
        sqlite3_int64 size = 0;
        memset(out, 0, (size_t)pageSize);
        if (real->pMethods->xFileSize(real, &size) == SQLITE_OK && size <= offset) return SQLITE_IOERR_SHORT_READ;
        sqlite3_log(SQLITE_IOERR_DATA, "sealed VFS: page %u cut short (truncated file)", pgno);
        return SQLITE_IOERR_DATA;
    }
    if (rc != SQLITE_OK) return rc;
    if (pgno == 1) {
        rc = loadHeader(file);
        if (rc != SQLITE_OK) {
            memset(out, 0, (size_t)pageSize);
            return rc == SQLITE_IOERR_SHORT_READ ? SQLITE_NOTADB : rc;
        }
        if (file->pageSize != pageSize) {
            memset(out, 0, (size_t)pageSize);
            return SQLITE_NOTADB;
        }
    }
    if (akp_open(&file->cipher, file->subkey, file->generation, pgno, out, out, pageSize) != 0) {
        sqlite3_log(SQLITE_IOERR_DATA, "sealed VFS: page %u fails its authentication tag", pgno);
        return pgno == 1 ? SQLITE_NOTADB : SQLITE_IOERR_DATA;
    }
    return SQLITE_OK;
}

static int mainRead(SealedFile *file, unsigned char *buffer, int amount, sqlite3_int64 offset) {
    if (file->state == MAIN_NOT_OURS) {
        memset(buffer, 0, (size_t)amount);
        return SQLITE_NOTADB;
    }
    if (file->pageSize == 0 || (offset < file->pageSize && amount != file->pageSize)) {
        int rc = loadHeader(file);
        if (rc != SQLITE_OK) {
            memset(buffer, 0, (size_t)amount);
            return rc;
        }
    }
    int pageSize = file->pageSize;
    uint32_t pgno = (uint32_t)(offset / pageSize) + 1;
    int within = (int)(offset % pageSize);
    if (within == 0 && amount == pageSize) return readMainPage(file, pgno, buffer);
    if (within + amount > pageSize || akv_ensurePage(file, pageSize) != 0) return SQLITE_IOERR_READ;
    // A sub-page read (page 1's header, unlocked at open): a page 1 being rewritten by another
    // process's checkpoint may read torn, so a failed tag is read again before it counts.
    int rc = SQLITE_OK;
    for (int attempt = 0; attempt < 3; attempt++) {
        rc = readMainPage(file, pgno, file->page);
        if (rc != SQLITE_NOTADB && rc != SQLITE_IOERR_DATA) break;
    }
    memcpy(buffer, file->page + within, (size_t)amount);
    OPENSSL_cleanse(file->page, (size_t)pageSize);
    return rc;
}

/// Whether SQLite's page `buffer` may be sealed: its reserve is zeros (the WAL checksum covers
/// it, and it reads back as zeros), and page 1 carries SQLite's header with our reserve.
int akv_acceptablePage(const unsigned char *buffer, uint32_t pgno, int pageSize) {
    if (!akp_valid_page_size(pageSize) || !akp_all_zero(buffer, pageSize - AK_SEALED_RESERVE, pageSize)) return 0;
    return pgno != 1 || (memcmp(buffer, "SQLite format 3", 16) == 0 && buffer[20] == AK_SEALED_RESERVE);
}

/// Seals SQLite's page into the scratch page and writes it where SQLite asked, in one write.
int akv_writeSealed(SealedFile *file, SealedFile *main, const unsigned char *buffer, uint32_t pgno, int pageSize,
                       sqlite3_int64 offset) {
    if (!akv_acceptablePage(buffer, pgno, pageSize)) {
        sqlite3_log(SQLITE_IOERR_WRITE, "sealed VFS: refused page %u: its reserved bytes are not the VFS's (set SQLITE_FCNTL_RESERVE_BYTES to %d)",
                    pgno, AK_SEALED_RESERVE);
        return SQLITE_IOERR_WRITE;
    }
    if (akv_ensurePage(file, pageSize) != 0) return SQLITE_IOERR_NOMEM;
    if (akp_seal(&file->cipher, main->subkey, main->generation, main->identity, pgno, buffer, file->page, pageSize) != 0) {
        return SQLITE_IOERR_WRITE;
    }
    sqlite3_file *real = akv_realFile(&file->base);
    return real->pMethods->xWrite(real, file->page, pageSize, offset);
}

static int mainWrite(SealedFile *file, const unsigned char *buffer, int amount, sqlite3_int64 offset) {
    // Never write into a file that is not a sealed database (a plaintext one, another program's).
    if (file->state == MAIN_NOT_OURS || !akp_valid_page_size(amount) || offset % amount != 0) {
        sqlite3_log(SQLITE_IOERR_WRITE, "sealed VFS: refused a write of %d bytes at %lld", amount, offset);
        return SQLITE_IOERR_WRITE;
    }
    uint32_t pgno = (uint32_t)(offset / amount) + 1;
    int rc = akv_writeSealed(file, file, buffer, pgno, amount, offset);
    if (rc == SQLITE_OK && pgno == 1) {
        file->pageSize = amount;
        file->state = MAIN_SEALED;
    }
    return rc;
}

// MARK: io methods

static int sealedRead(sqlite3_file *base, void *buffer, int amount, sqlite3_int64 offset) {
    SealedFile *file = (SealedFile *)base;
    switch (file->kind) {
    case KIND_MAIN: return mainRead(file, buffer, amount, offset);
    case KIND_WAL: return akv_walAccess(file, buffer, amount, offset, 0);
    default: return akv_journalAccess(file, buffer, amount, offset, 0);
    }
}

static int sealedWrite(sqlite3_file *base, const void *buffer, int amount, sqlite3_int64 offset) {
    SealedFile *file = (SealedFile *)base;
    // The buffer is SQLite's page cache: only ever read (sealed into the file's own scratch).
    switch (file->kind) {
    case KIND_MAIN: return mainWrite(file, buffer, amount, offset);
    case KIND_WAL: return akv_walAccess(file, (void *)buffer, amount, offset, 1);
    default: return akv_journalAccess(file, (void *)buffer, amount, offset, 1);
    }
}

static int sealedClose(sqlite3_file *base) {
    SealedFile *file = (SealedFile *)base;
    sqlite3_file *real = akv_realFile(base);
    int rc = real->pMethods ? real->pMethods->xClose(real) : SQLITE_OK;
    akp_cipher_free(&file->cipher);
    if (file->page) {
        OPENSSL_cleanse(file->page, (size_t)file->pageCapacity);
        free(file->page);
    }
    free(file->renamed);
    OPENSSL_cleanse(file->key, sizeof file->key);
    OPENSSL_cleanse(file->subkey, sizeof file->subkey);
    file->page = NULL;
    file->renamed = NULL;
    return rc;
}

static int sealedTruncate(sqlite3_file *f, sqlite3_int64 size) { return akv_realFile(f)->pMethods->xTruncate(akv_realFile(f), size); }
static int sealedSync(sqlite3_file *f, int flags) { return akv_realFile(f)->pMethods->xSync(akv_realFile(f), flags); }
static int sealedFileSize(sqlite3_file *f, sqlite3_int64 *size) { return akv_realFile(f)->pMethods->xFileSize(akv_realFile(f), size); }
static int sealedLock(sqlite3_file *f, int level) { return akv_realFile(f)->pMethods->xLock(akv_realFile(f), level); }
static int sealedUnlock(sqlite3_file *f, int level) { return akv_realFile(f)->pMethods->xUnlock(akv_realFile(f), level); }
static int sealedCheckReserved(sqlite3_file *f, int *out) { return akv_realFile(f)->pMethods->xCheckReservedLock(akv_realFile(f), out); }
static int sealedFileControl(sqlite3_file *f, int op, void *arg) { return akv_realFile(f)->pMethods->xFileControl(akv_realFile(f), op, arg); }
static int sealedSectorSize(sqlite3_file *f) { return akv_realFile(f)->pMethods->xSectorSize(akv_realFile(f)); }
static int sealedDeviceCharacteristics(sqlite3_file *f) {
    // Sub-page reads of overflow pages and batch-atomic writes would bypass whole-page sealing.
    return akv_realFile(f)->pMethods->xDeviceCharacteristics(akv_realFile(f)) & ~(SQLITE_IOCAP_SUBPAGE_READ | SQLITE_IOCAP_BATCH_ATOMIC);
}
static int sealedShmMap(sqlite3_file *f, int page, int size, int extend, void volatile **out) {
    return akv_realFile(f)->pMethods->xShmMap(akv_realFile(f), page, size, extend, out);
}
static int sealedShmLock(sqlite3_file *f, int offset, int n, int flags) { return akv_realFile(f)->pMethods->xShmLock(akv_realFile(f), offset, n, flags); }
static void sealedShmBarrier(sqlite3_file *f) { akv_realFile(f)->pMethods->xShmBarrier(akv_realFile(f)); }
static int sealedShmUnmap(sqlite3_file *f, int delete) { return akv_realFile(f)->pMethods->xShmUnmap(akv_realFile(f), delete); }

// MARK: VFS methods

/// The name SQLite's "-wal"/"-journal" file is kept under ("-swal"/"-sjournal"), in an
/// allocation laid out as SQLite's own names are (zeros before, an empty URI list after);
/// NULL (and *renamed untouched) for any other name.
static char *renamedPath(const char *path, char **allocation) {
    static const struct { const char *from, *to; } map[] = {{"-wal", "-swal"}, {"-journal", "-sjournal"}};
    size_t length = strlen(path);
    for (size_t i = 0; i < 2; i++) {
        size_t fromLength = strlen(map[i].from), toLength = strlen(map[i].to);
        if (length < fromLength || strcmp(path + length - fromLength, map[i].from) != 0) continue;
        char *buffer = calloc(4 + length - fromLength + toLength + 4, 1);
        if (!buffer) return NULL;
        memcpy(buffer + 4, path, length - fromLength);
        memcpy(buffer + 4 + length - fromLength, map[i].to, toLength);
        *allocation = buffer;
        return buffer + 4;
    }
    return NULL;
}

static int sealedOpen(sqlite3_vfs *vfs, const char *name, sqlite3_file *base, int flags, int *outFlags) {
    SealedFile *file = (SealedFile *)base;
    memset(file, 0, sizeof *file);
    file->pgnoOffset = -1;
    const char *path = name;
    if ((flags & SQLITE_OPEN_MAIN_DB) && name && akPendingKey) {
        file->kind = KIND_MAIN;
        memcpy(file->key, akPendingKey, AK_SEALED_KEY_BYTES);
        // Until page 1 is on disk (an empty file), a fresh random id: the first page-1 write
        // records it.
        memcpy(file->identity, AK_MAGIC, AK_MAGIC_BYTES);
        if (akp_key_check(file->key, file->identity + AK_MAGIC_BYTES) != 0
            || RAND_bytes(file->identity + AK_FILE_ID_OFFSET, AK_FILE_ID_BYTES) != 1
            || akp_derive(file->key, file->identity + AK_FILE_ID_OFFSET, file->subkey) != 0) {
            OPENSSL_cleanse(file->key, sizeof file->key);
            return SQLITE_CANTOPEN;
        }
        file->generation = 1;
    } else if ((flags & (SQLITE_OPEN_WAL | SQLITE_OPEN_MAIN_JOURNAL)) && name) {
        sqlite3_file *database = sqlite3_database_file_object(name);
        if (!database || database->pMethods != &sealedMethods) return SQLITE_CANTOPEN;
        file->kind = flags & SQLITE_OPEN_WAL ? KIND_WAL : KIND_JOURNAL;
        file->main = (SealedFile *)database;
        path = renamedPath(name, &file->renamed);
        if (!path) return SQLITE_CANTOPEN;
    } else {
        // No key handed over, a temporary file (temp_store = MEMORY keeps them in memory), a
        // super-journal: nothing the VFS could seal or would let through in clear.
        sqlite3_log(SQLITE_CANTOPEN, "sealed VFS: refused to open %s (flags 0x%x)", name ? name : "a temporary file", flags);
        return SQLITE_CANTOPEN;
    }
    sqlite3_file *real = akv_realFile(base);
    int rc = origVFS(vfs)->xOpen(origVFS(vfs), path, real, flags, outFlags);
    if (rc != SQLITE_OK) {
        free(file->renamed);
        file->renamed = NULL;
        OPENSSL_cleanse(file->key, sizeof file->key);
        OPENSSL_cleanse(file->subkey, sizeof file->subkey);
        return rc;
    }
    if (file->kind == KIND_MAIN) {
        int header = loadHeader(file);
        if (header != SQLITE_OK && header != SQLITE_IOERR_SHORT_READ && header != SQLITE_NOTADB) {
            real->pMethods->xClose(real);
            OPENSSL_cleanse(file->key, sizeof file->key);
            OPENSSL_cleanse(file->subkey, sizeof file->subkey);
            return header;
        }
    }
    base->pMethods = &sealedMethods;
    return SQLITE_OK;
}

static int sealedDelete(sqlite3_vfs *vfs, const char *name, int syncDirectory) {
    char *allocation = NULL;
    const char *path = renamedPath(name, &allocation);
    int rc = origVFS(vfs)->xDelete(origVFS(vfs), path ? path : name, syncDirectory);
    free(allocation);
    return rc;
}

static int sealedAccess(sqlite3_vfs *vfs, const char *name, int flags, int *result) {
    char *allocation = NULL;
    const char *path = renamedPath(name, &allocation);
    int rc = origVFS(vfs)->xAccess(origVFS(vfs), path ? path : name, flags, result);
    free(allocation);
    return rc;
}

static int sealedFullPathname(sqlite3_vfs *v, const char *name, int n, char *out) { return origVFS(v)->xFullPathname(origVFS(v), name, n, out); }
static void *sealedDlOpen(sqlite3_vfs *v, const char *path) { return origVFS(v)->xDlOpen(origVFS(v), path); }
static void sealedDlError(sqlite3_vfs *v, int n, char *out) { origVFS(v)->xDlError(origVFS(v), n, out); }
static void (*sealedDlSym(sqlite3_vfs *v, void *handle, const char *symbol))(void) { return origVFS(v)->xDlSym(origVFS(v), handle, symbol); }
static void sealedDlClose(sqlite3_vfs *v, void *handle) { origVFS(v)->xDlClose(origVFS(v), handle); }
static int sealedRandomness(sqlite3_vfs *v, int n, char *out) { return origVFS(v)->xRandomness(origVFS(v), n, out); }
static int sealedSleep(sqlite3_vfs *v, int microseconds) { return origVFS(v)->xSleep(origVFS(v), microseconds); }
static int sealedCurrentTime(sqlite3_vfs *v, double *out) { return origVFS(v)->xCurrentTime(origVFS(v), out); }
static int sealedGetLastError(sqlite3_vfs *v, int n, char *out) { return origVFS(v)->xGetLastError(origVFS(v), n, out); }
static int sealedCurrentTimeInt64(sqlite3_vfs *v, sqlite3_int64 *out) { return origVFS(v)->xCurrentTimeInt64(origVFS(v), out); }

static int registration = SQLITE_ERROR;

static void registerOnce(void) {
    sqlite3_vfs *orig = sqlite3_vfs_find(NULL);
    if (!orig || orig->iVersion < 2 || akp_init() != 0) return;
    // Version 2 io methods: no xFetch, so SQLite never memory-maps a sealed file (it would
    // read ciphertext), whatever PRAGMA mmap_size says.
    sealedMethods = (sqlite3_io_methods){
        2, sealedClose, sealedRead, sealedWrite, sealedTruncate, sealedSync, sealedFileSize, sealedLock, sealedUnlock,
        sealedCheckReserved, sealedFileControl, sealedSectorSize, sealedDeviceCharacteristics,
        sealedShmMap, sealedShmLock, sealedShmBarrier, sealedShmUnmap, NULL, NULL,
    };
    sealedVFS = (sqlite3_vfs){
        2, (int)sizeof(SealedFile) + orig->szOsFile, orig->mxPathname, NULL, AK_SEALED_VFS_NAME, orig,
        sealedOpen, sealedDelete, sealedAccess, sealedFullPathname, sealedDlOpen, sealedDlError, sealedDlSym, sealedDlClose,
        sealedRandomness, sealedSleep, sealedCurrentTime, sealedGetLastError, sealedCurrentTimeInt64, NULL, NULL, NULL,
    };
    registration = sqlite3_vfs_register(&sealedVFS, 0);
}

int ak_sealed_register(void) {
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, registerOnce);
    return registration;
}
