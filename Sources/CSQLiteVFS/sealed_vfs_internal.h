// Internal to the sealed VFS: its file struct, the helpers its database, WAL and journal code
// share, and the thread-local key hand-off between ak_sealed_open (and ak_sealed_migrate) and
// the VFS's xOpen.
#ifndef APPKERNEL_SEALED_VFS_INTERNAL_H
#define APPKERNEL_SEALED_VFS_INTERNAL_H

#include <sqlite3.h>
#include "sealed_page.h"

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
    /// Page 1's first 16 bytes: magic, key check, file id (at AK_FILE_ID_OFFSET).
    unsigned char identity[AK_IDENTITY_BYTES];
    unsigned char subkey[AK_SEALED_KEY_BYTES];
};

/// The real (unix) file, laid out right after ours in SQLite's allocation.
static inline sqlite3_file *akv_realFile(sqlite3_file *file) { return (sqlite3_file *)(((SealedFile *)file) + 1); }
/// Makes sure `file->page` holds `size` bytes; 0 on success.
int akv_ensurePage(SealedFile *file, int size);
/// Loads the database's identity (file id, page size) from disk if it has none yet.
int akv_ensureIdentity(SealedFile *main);
/// Whether SQLite's page may be sealed: its reserve all zeros, page 1 with SQLite's header and
/// our reserve.
int akv_acceptablePage(const unsigned char *buffer, uint32_t pgno, int pageSize);
/// Seals SQLite's page `buffer` as page `pgno` and writes it at `offset`, in one write.
int akv_writeSealed(SealedFile *file, SealedFile *main, const unsigned char *buffer, uint32_t pgno, int pageSize, sqlite3_int64 offset);
/// The WAL's and the rollback journal's reads (`writing` 0) and writes.
int akv_walAccess(SealedFile *file, void *buffer, int amount, sqlite3_int64 offset, int writing);
int akv_journalAccess(SealedFile *file, void *buffer, int amount, sqlite3_int64 offset, int writing);

/// The key the next main-database xOpen on this thread takes; NULL outside a sealed open.
extern _Thread_local const unsigned char *akPendingKey;

#endif
