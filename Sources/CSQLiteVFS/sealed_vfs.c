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

enum { KIND_MAIN = 1, KIND_WAL = 2, KIND_JOURNAL = 3 };
/// A database file's state: empty when opened (its id not yet on disk), sealed, or not ours.
enum { MAIN_NEW = 0, MAIN_SEALED = 1, MAIN_NOT_OURS = 2 };

typedef struct SealedFile SealedFile;
struct SealedFile {
    sqlite3_file base;
    int kind;
    /// For a WAL or journal: the database's file, which SQLite closes after them.
    SealedFile *main;
    /// The allocation behind the renamed WAL or journal path (the unix VFS keeps the pointer).
    char *renamed;
    ak_cipher cipher;
    /// A page-sized buffer for sub-page reads and whole-frame writes.
    unsigned char *page;
    int pageCapacity;
    /// WAL and journal: the page number SQLite wrote or read just before (a frame header, a
    /// journal record's first 4 bytes), and the offset of the page it belongs to.
    sqlite3_int64 pgnoOffset;
    uint32_t pgno;
    // The database file only:
    int state;
    int pageSize;
    unsigned generation;
    unsigned char key[AK_SEALED_KEY_BYTES];
    unsigned char fileId[AK_FILE_ID_BYTES];
    unsigned char subkey[AK_SEALED_KEY_BYTES];
};

static sqlite3_vfs sealedVFS;
static sqlite3_io_methods sealedMethods;

static sqlite3_vfs *origVFS(sqlite3_vfs *vfs) { return (sqlite3_vfs *)vfs->pAppData; }
static sqlite3_file *realFile(sqlite3_file *file) { return (sqlite3_file *)(((SealedFile *)file) + 1); }

static int ensurePage(SealedFile *file, int size) {
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
    sqlite3_file *real = realFile(&main->base);
    int rc = real->pMethods->xRead(real, header, AK_HEADER_CLEAR, 0);
    if (rc == SQLITE_IOERR_SHORT_READ) {
        // Empty (or shorter than a header: SQLite reads it as empty or fails on it itself).
        return main->state == MAIN_SEALED ? SQLITE_NOTADB : SQLITE_IOERR_SHORT_READ;
    }
    if (rc != SQLITE_OK) return rc;
    int pageSize = akp_header_page_size(header);
    if (memcmp(header, AK_MAGIC, AK_MAGIC_BYTES) != 0 || !pageSize) {
        main->state = MAIN_NOT_OURS;
        return SQLITE_NOTADB;
    }
    main->pageSize = pageSize;
    if (main->state != MAIN_SEALED || memcmp(main->fileId, header + AK_MAGIC_BYTES, AK_FILE_ID_BYTES) != 0) {
        memcpy(main->fileId, header + AK_MAGIC_BYTES, AK_FILE_ID_BYTES);
        if (akp_derive(main->key, main->fileId, main->subkey) != 0) return SQLITE_IOERR;
        main->generation++;
    }
    main->state = MAIN_SEALED;
    return SQLITE_OK;
}

/// A WAL or journal needs the database's identity on disk before it holds a page.
static int ensureIdentity(SealedFile *main) {
    if (main->state == MAIN_SEALED) return SQLITE_OK;
    int rc = loadHeader(main);
    return rc == SQLITE_OK ? SQLITE_OK : (rc == SQLITE_IOERR_SHORT_READ ? SQLITE_IOERR_WRITE : rc);
}

// MARK: Database file

/// Reads page `pgno` (P bytes) into `out`, decrypted. A page past the end: zeros and
/// SQLITE_IOERR_SHORT_READ, as the unix VFS answers; a page cut short: SQLITE_IOERR_DATA.
static int readMainPage(SealedFile *file, uint32_t pgno, unsigned char *out) {
    int pageSize = file->pageSize;
    sqlite3_file *real = realFile(&file->base);
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
    if (within + amount > pageSize || ensurePage(file, pageSize) != 0) return SQLITE_IOERR_READ;
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
static int acceptablePage(const unsigned char *buffer, uint32_t pgno, int pageSize) {
    if (!akp_valid_page_size(pageSize) || !akp_all_zero(buffer, pageSize - AK_SEALED_RESERVE, pageSize)) return 0;
    return pgno != 1 || (memcmp(buffer, "SQLite format 3", 16) == 0 && buffer[20] == AK_SEALED_RESERVE);
}

/// Seals SQLite's page into the scratch page and writes it where SQLite asked, in one write.
static int writeSealed(SealedFile *file, SealedFile *main, const unsigned char *buffer, uint32_t pgno, int pageSize,
                       sqlite3_int64 offset) {
    if (!acceptablePage(buffer, pgno, pageSize)) {
        sqlite3_log(SQLITE_IOERR_WRITE, "sealed VFS: refused page %u: its reserved bytes are not the VFS's (set SQLITE_FCNTL_RESERVE_BYTES to %d)",
                    pgno, AK_SEALED_RESERVE);
        return SQLITE_IOERR_WRITE;
    }
    if (ensurePage(file, pageSize) != 0) return SQLITE_IOERR_NOMEM;
    if (akp_seal(&file->cipher, main->subkey, main->generation, main->fileId, pgno, buffer, file->page, pageSize) != 0) {
        return SQLITE_IOERR_WRITE;
    }
    sqlite3_file *real = realFile(&file->base);
    return real->pMethods->xWrite(real, file->page, pageSize, offset);
}

static int mainWrite(SealedFile *file, const unsigned char *buffer, int amount, sqlite3_int64 offset) {
    // Never write into a file that is not a sealed database (a plaintext one, another program's).
    if (file->state == MAIN_NOT_OURS || !akp_valid_page_size(amount) || offset % amount != 0) {
        sqlite3_log(SQLITE_IOERR_WRITE, "sealed VFS: refused a write of %d bytes at %lld", amount, offset);
        return SQLITE_IOERR_WRITE;
    }
    uint32_t pgno = (uint32_t)(offset / amount) + 1;
    int rc = writeSealed(file, file, buffer, pgno, amount, offset);
    if (rc == SQLITE_OK && pgno == 1) {
        file->pageSize = amount;
        file->state = MAIN_SEALED;
    }
    return rc;
}

// MARK: WAL

/// The page number in the frame header before the page at `dataOffset`: remembered from the
/// header's write or read, or read from the file.
static int framePgno(SealedFile *file, sqlite3_int64 dataOffset, uint32_t *pgno) {
    if (file->pgnoOffset == dataOffset) {
        *pgno = file->pgno;
        return SQLITE_OK;
    }
    unsigned char bytes[4];
    sqlite3_file *real = realFile(&file->base);
    int rc = real->pMethods->xRead(real, bytes, 4, dataOffset - 24);
    if (rc != SQLITE_OK) return rc == SQLITE_IOERR_SHORT_READ ? SQLITE_IOERR_DATA : rc;
    *pgno = akp_get32(bytes);
    return SQLITE_OK;
}

static int walAccess(SealedFile *file, void *buffer, int amount, sqlite3_int64 offset, int writing) {
    sqlite3_file *real = realFile(&file->base);
    SealedFile *main = file->main;
    if (offset + amount <= 32) {
        return writing ? real->pMethods->xWrite(real, buffer, amount, offset) : real->pMethods->xRead(real, buffer, amount, offset);
    }
    int rc = ensureIdentity(main);
    if (rc != SQLITE_OK) return rc;
    int pageSize = main->pageSize, frameSize = pageSize + 24;
    sqlite3_int64 relative = offset - 32;
    int within = relative < 0 ? -1 : (int)(relative % frameSize);
    unsigned char *bytes = buffer;
    if (within >= 0 && within + amount <= 24) {
        // Frame header pieces: clear. A whole header gives the page number of the page after it.
        rc = writing ? real->pMethods->xWrite(real, buffer, amount, offset) : real->pMethods->xRead(real, buffer, amount, offset);
        if (rc == SQLITE_OK && within == 0 && amount >= 4) {
            file->pgnoOffset = offset + 24;
            file->pgno = akp_get32(bytes);
        }
        return rc;
    }
    if (within == 24 && amount == pageSize) {
        uint32_t pgno;
        rc = framePgno(file, offset, &pgno);
        if (rc != SQLITE_OK) return rc;
        if (writing) return writeSealed(file, main, bytes, pgno, pageSize, offset);
        rc = real->pMethods->xRead(real, bytes, amount, offset);
        if (rc != SQLITE_OK) {
            memset(bytes, 0, (size_t)amount);
            return rc == SQLITE_IOERR_SHORT_READ ? SQLITE_IOERR_DATA : rc;
        }
        if (akp_open(&file->cipher, main->subkey, main->generation, pgno, bytes, bytes, pageSize) != 0) {
            sqlite3_log(SQLITE_IOERR_DATA, "sealed VFS: WAL frame of page %u fails its authentication tag", pgno);
            return SQLITE_IOERR_DATA;
        }
        return SQLITE_OK;
    }
    if (within == 0 && amount == frameSize) {
        uint32_t pgno = akp_get32(bytes);
        if (writing) {
            if (!acceptablePage(bytes + 24, pgno, pageSize) || ensurePage(file, frameSize) != 0) return SQLITE_IOERR_WRITE;
            memcpy(file->page, bytes, 24);
            rc = akp_seal(&file->cipher, main->subkey, main->generation, main->fileId, pgno, bytes + 24, file->page + 24, pageSize);
            return rc == 0 ? real->pMethods->xWrite(real, file->page, frameSize, offset) : SQLITE_IOERR_WRITE;
        }
        // Recovery scans whole frames up to the end of the log: a frame whose page fails its tag
        // (torn by a kill between header and page, or left over from an older log) reads as
        // zeros, and SQLite's own checksum then ends the log there.
        rc = real->pMethods->xRead(real, bytes, amount, offset);
        if (rc != SQLITE_OK) return rc;
        if (akp_open(&file->cipher, main->subkey, main->generation, pgno, bytes + 24, bytes + 24, pageSize) != 0) {
            sqlite3_log(SQLITE_NOTICE, "sealed VFS: WAL recovery stops at a frame of page %u that fails its tag", pgno);
        }
        return SQLITE_OK;
    }
    sqlite3_log(SQLITE_IOERR, "sealed VFS: refused a WAL %s of %d bytes at %lld", writing ? "write" : "read", amount, offset);
    if (!writing) memset(buffer, 0, (size_t)amount);
    return writing ? SQLITE_IOERR_WRITE : SQLITE_IOERR_READ;
}

// MARK: Rollback journal

/// A rollback journal header's first 8 bytes (fileformat2 §3).
static const unsigned char journalMagic[8] = {0xd9, 0xd5, 0x05, 0xf9, 0x20, 0xa1, 0x63, 0xd7};

static int journalAccess(SealedFile *file, void *buffer, int amount, sqlite3_int64 offset, int writing) {
    sqlite3_file *real = realFile(&file->base);
    SealedFile *main = file->main;
    unsigned char *bytes = buffer;
    int rc;
    if (amount == 4) {
        // A record's page number (or a header field, a checksum): remembered for the page after it.
        rc = writing ? real->pMethods->xWrite(real, buffer, 4, offset) : real->pMethods->xRead(real, buffer, 4, offset);
        if (rc == SQLITE_OK) {
            file->pgnoOffset = offset + 4;
            file->pgno = akp_get32(bytes);
        }
        return rc;
    }
    // A page after its page number — unless SQLite writes a journal header there (a new segment
    // after a sync): the header's magic and zeros are no page SQLite writes (page 1 starts
    // "SQLite format 3", others with a page type or a page number far beyond any database).
    int header = writing && amount >= 28 && memcmp(bytes, journalMagic, 8) == 0 && akp_all_zero(bytes, 28, amount);
    if (offset == file->pgnoOffset && akp_valid_page_size(amount) && !header) {
        rc = ensureIdentity(main);
        if (rc != SQLITE_OK) return rc;
        if (amount != main->pageSize) return writing ? SQLITE_IOERR_WRITE : SQLITE_IOERR_READ;
        if (writing) return writeSealed(file, main, bytes, file->pgno, amount, offset);
        rc = real->pMethods->xRead(real, bytes, amount, offset);
        if (rc != SQLITE_OK) return rc;
        if (akp_open(&file->cipher, main->subkey, main->generation, file->pgno, bytes, bytes, amount) != 0) {
            sqlite3_log(SQLITE_IOERR_DATA, "sealed VFS: journal record of page %u fails its authentication tag", file->pgno);
            return SQLITE_IOERR_DATA;
        }
        return SQLITE_OK;
    }
    if (!writing) return real->pMethods->xRead(real, buffer, amount, offset);
    // Headers: magic, record count, checksum seed, sizes (28 bytes), then zeros to the sector.
    if (amount <= 28 || akp_all_zero(bytes, 28, amount)) return real->pMethods->xWrite(real, buffer, amount, offset);
    sqlite3_log(SQLITE_IOERR_WRITE, "sealed VFS: refused a journal write of %d bytes at %lld", amount, offset);
    return SQLITE_IOERR_WRITE;
}

// MARK: io methods

static int sealedRead(sqlite3_file *base, void *buffer, int amount, sqlite3_int64 offset) {
    SealedFile *file = (SealedFile *)base;
    switch (file->kind) {
    case KIND_MAIN: return mainRead(file, buffer, amount, offset);
    case KIND_WAL: return walAccess(file, buffer, amount, offset, 0);
    default: return journalAccess(file, buffer, amount, offset, 0);
    }
}

static int sealedWrite(sqlite3_file *base, const void *buffer, int amount, sqlite3_int64 offset) {
    SealedFile *file = (SealedFile *)base;
    // The buffer is SQLite's page cache: only ever read (sealed into the file's own scratch).
    switch (file->kind) {
    case KIND_MAIN: return mainWrite(file, buffer, amount, offset);
    case KIND_WAL: return walAccess(file, (void *)buffer, amount, offset, 1);
    default: return journalAccess(file, (void *)buffer, amount, offset, 1);
    }
}

static int sealedClose(sqlite3_file *base) {
    SealedFile *file = (SealedFile *)base;
    sqlite3_file *real = realFile(base);
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

static int sealedTruncate(sqlite3_file *f, sqlite3_int64 size) { return realFile(f)->pMethods->xTruncate(realFile(f), size); }
static int sealedSync(sqlite3_file *f, int flags) { return realFile(f)->pMethods->xSync(realFile(f), flags); }
static int sealedFileSize(sqlite3_file *f, sqlite3_int64 *size) { return realFile(f)->pMethods->xFileSize(realFile(f), size); }
static int sealedLock(sqlite3_file *f, int level) { return realFile(f)->pMethods->xLock(realFile(f), level); }
static int sealedUnlock(sqlite3_file *f, int level) { return realFile(f)->pMethods->xUnlock(realFile(f), level); }
static int sealedCheckReserved(sqlite3_file *f, int *out) { return realFile(f)->pMethods->xCheckReservedLock(realFile(f), out); }
static int sealedFileControl(sqlite3_file *f, int op, void *arg) { return realFile(f)->pMethods->xFileControl(realFile(f), op, arg); }
static int sealedSectorSize(sqlite3_file *f) { return realFile(f)->pMethods->xSectorSize(realFile(f)); }
static int sealedDeviceCharacteristics(sqlite3_file *f) {
    // Sub-page reads of overflow pages and batch-atomic writes would bypass whole-page sealing.
    return realFile(f)->pMethods->xDeviceCharacteristics(realFile(f)) & ~(SQLITE_IOCAP_SUBPAGE_READ | SQLITE_IOCAP_BATCH_ATOMIC);
}
static int sealedShmMap(sqlite3_file *f, int page, int size, int extend, void volatile **out) {
    return realFile(f)->pMethods->xShmMap(realFile(f), page, size, extend, out);
}
static int sealedShmLock(sqlite3_file *f, int offset, int n, int flags) { return realFile(f)->pMethods->xShmLock(realFile(f), offset, n, flags); }
static void sealedShmBarrier(sqlite3_file *f) { realFile(f)->pMethods->xShmBarrier(realFile(f)); }
static int sealedShmUnmap(sqlite3_file *f, int delete) { return realFile(f)->pMethods->xShmUnmap(realFile(f), delete); }

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
        if (RAND_bytes(file->fileId, AK_FILE_ID_BYTES) != 1 || akp_derive(file->key, file->fileId, file->subkey) != 0) {
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
    sqlite3_file *real = realFile(base);
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
