// The sealed VFS's WAL and rollback journal: SQLite's metadata (headers, page numbers, salts,
// checksums) in clear, every page sealed as the page number it belongs to (see sealed_vfs.c).
#include "sealed_vfs_internal.h"
#include <string.h>

// MARK: WAL

/// The page number in the frame header before the page at `dataOffset`: remembered from the
/// header's write or read, or read from the file.
static int framePgno(SealedFile *file, sqlite3_int64 dataOffset, uint32_t *pgno) {
    if (file->pgnoOffset == dataOffset) {
        *pgno = file->pgno;
        return SQLITE_OK;
    }
    unsigned char bytes[4];
    sqlite3_file *real = akv_realFile(&file->base);
    int rc = real->pMethods->xRead(real, bytes, 4, dataOffset - 24);
    if (rc != SQLITE_OK) return rc == SQLITE_IOERR_SHORT_READ ? SQLITE_IOERR_DATA : rc;
    *pgno = akp_get32(bytes);
    return SQLITE_OK;
}

int akv_walAccess(SealedFile *file, void *buffer, int amount, sqlite3_int64 offset, int writing) {
    sqlite3_file *real = akv_realFile(&file->base);
    SealedFile *main = file->main;
    if (offset + amount <= 32) {
        return writing ? real->pMethods->xWrite(real, buffer, amount, offset) : real->pMethods->xRead(real, buffer, amount, offset);
    }
    int rc = akv_ensureIdentity(main);
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
        if (writing) return akv_writeSealed(file, main, bytes, pgno, pageSize, offset);
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
            if (!akv_acceptablePage(bytes + 24, pgno, pageSize) || akv_ensurePage(file, frameSize) != 0) return SQLITE_IOERR_WRITE;
            memcpy(file->page, bytes, 24);
            rc = akp_seal(&file->cipher, main->subkey, main->generation, main->identity, pgno, bytes + 24, file->page + 24, pageSize);
            return rc == 0 ? real->pMethods->xWrite(real, file->page, frameSize, offset) : SQLITE_IOERR_WRITE;
        }
        // Recovery scans whole frames up to the end of the log: a frame whose page fails its tag
        // (torn by a kill between header and page, or left over from an older log) reads as
        // zeros, and SQLite's own checksum then ends the log there.
        rc = real->pMethods->xRead(real, bytes, amount, offset);
        if (rc != SQLITE_OK) return rc;
        pgno = akp_get32(bytes);
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

int akv_journalAccess(SealedFile *file, void *buffer, int amount, sqlite3_int64 offset, int writing) {
    sqlite3_file *real = akv_realFile(&file->base);
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
        rc = akv_ensureIdentity(main);
        if (rc != SQLITE_OK) return rc;
        if (amount != main->pageSize) return writing ? SQLITE_IOERR_WRITE : SQLITE_IOERR_READ;
        if (writing) return akv_writeSealed(file, main, bytes, file->pgno, amount, offset);
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
