// AppKernel's sealed SQLite VFS: every page of a database, its WAL and its rollback journal
// encrypted and authenticated with AES-256-GCM (the system's libcrypto), the nonce and tag in
// each page's reserved bytes. A shim over the default (unix) VFS, registered under
// AK_SEALED_VFS_NAME, never as the default. The page format is in AppKernelStore's DocC catalog
// ("Sealed store pages").
//
// The key never appears in a URI or a file name: ak_sealed_open hands it to the VFS through a
// thread-local pointer that is set for the duration of sqlite3_open_v2 only; the database file
// keeps its own copy (and derived subkey), wiped when the file closes.
#ifndef APPKERNEL_SEALED_VFS_H
#define APPKERNEL_SEALED_VFS_H

#include <stddef.h>
#include <sqlite3.h>

#ifdef __cplusplus
extern "C" {
#endif

/// The VFS's name (`sqlite3_vfs_find`, `?vfs=` in a URI).
#define AK_SEALED_VFS_NAME "appkernel-sealed"
/// The length of a key: AES-256.
#define AK_SEALED_KEY_BYTES 32
/// The reserved bytes at the end of every page: nonce (12), tag (16), format (4).
#define AK_SEALED_RESERVE 32

/// Registers the VFS (once; later calls return the first call's result). Not the default VFS.
/// Returns SQLITE_OK, or SQLITE_ERROR when libcrypto lacks AES-256-GCM or HKDF.
int ak_sealed_register(void);

/// Opens `path` (which must exist unless `flags` has SQLITE_OPEN_CREATE) through the sealed VFS
/// with `key` (AK_SEALED_KEY_BYTES bytes). Sets the busy timeout and `temp_store = MEMORY` (the
/// VFS refuses temporary files). A writable connection to an empty file writes page 1 at once,
/// with AK_SEALED_RESERVE reserved bytes, so every later file (WAL, journal) has the database's
/// identity. `*db` is set even on failure (for its message); close it with sqlite3_close_v2.
/// A wrong key fails here with SQLITE_NOTADB (ak_sealed_probe tells why).
int ak_sealed_open(const char *path, const unsigned char *key, int flags, int busyMilliseconds, sqlite3 **db);

/// What a file is, as ak_sealed_probe reads it (without SQLite, without writing).
typedef enum {
    /// No file, or an empty one.
    AK_PROBE_EMPTY = 0,
    /// A sealed database whose page 1 opens with the key.
    AK_PROBE_SEALED = 1,
    /// A sealed database sealed with another key (its key check differs).
    AK_PROBE_WRONG_KEY = 2,
    /// A plain SQLite database ("SQLite format 3").
    AK_PROBE_PLAINTEXT = 3,
    /// Neither: another kind of file.
    AK_PROBE_FOREIGN = 4,
    /// A sealed database with this key whose header or page 1 is damaged (fails its tag), or
    /// that is cut short inside page 1.
    AK_PROBE_DAMAGED = 5,
    /// The file cannot be read (errno says why).
    AK_PROBE_UNREADABLE = 6,
    /// A sealed database, key not checked (`key` was NULL).
    AK_PROBE_SEALED_UNCHECKED = 7,
} ak_probe_result;

/// Reads `path`'s first page(s) and says what the file is for `key` (NULL: the format only).
ak_probe_result ak_sealed_probe(const char *path, const unsigned char *key);

/// Seals the plain SQLite database at `path` in place: VACUUM INTO a sealed copy
/// (`<path>.sealing`), verified (every page's tag, `integrity_check`, the same tables and row
/// counts), switched to WAL, synced, then renamed over `path` after a second name
/// (`<path>.plain-old`) is linked to the plain file, whose bytes are then overwritten with zeros
/// and unlinked. The plain store is held with an exclusive lock throughout. Returns 0, or -1 with
/// `message` saying what failed (the plain store is then as it was).
int ak_sealed_migrate(const char *path, const unsigned char *key, int busyMilliseconds, char *message, size_t messageSize);

/// Clears what a migration killed midway left beside `path`: an unfinished `.sealing` copy
/// (removed), a `.plain-old` name (unlinked when it is `path` itself, else wiped). 0 or -1 (errno).
int ak_sealed_recover(const char *path);

/// Overwrites `count` bytes at `bytes` with zeros in a way the compiler keeps (OPENSSL_cleanse).
void ak_sealed_cleanse(void *bytes, size_t count);

#ifdef __cplusplus
}
#endif

#endif
