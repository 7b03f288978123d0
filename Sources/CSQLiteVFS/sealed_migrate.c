// Sealing a plain SQLite database in place (issue 30's research memo §7.2): a sealed copy made
// by VACUUM INTO through the sealed VFS, verified, then renamed over the plain file; the plain
// file's bytes overwritten before it is unlinked. Killed at any point, the store is either the
// plain file or the sealed one, whole, and ak_sealed_recover clears what the kill left.
#include "appkernel_sealed_vfs.h"
#include "sealed_vfs_internal.h"
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int fail(char *message, size_t size, const char *what, const char *detail) {
    snprintf(message, size, "%s%s%s", what, detail ? ": " : "", detail ? detail : "");
    return -1;
}

static int syncPath(const char *path, int directory) {
    int descriptor = open(path, (directory ? O_RDONLY | O_DIRECTORY : O_RDWR) | O_CLOEXEC);
    if (descriptor < 0) return -1;
    int rc = fsync(descriptor);
    close(descriptor);
    return rc;
}

static int syncParent(const char *path) {
    char *copy = strdup(path);
    if (!copy) return -1;
    int rc = syncPath(dirname(copy), 1);
    free(copy);
    return rc;
}

/// Overwrites the file's bytes with zeros, syncs, unlinks it (where the filesystem writes in
/// place — ext4, xfs — the old blocks hold zeros; copy-on-write filesystems keep them).
static int wipe(const char *path) {
    int descriptor = open(path, O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
    if (descriptor < 0) return errno == ENOENT ? 0 : -1;
    static const unsigned char zeros[65536];
    struct stat status;
    int rc = fstat(descriptor, &status);
    for (off_t done = 0; rc == 0 && done < status.st_size;) {
        size_t chunk = (size_t)(status.st_size - done < (off_t)sizeof zeros ? status.st_size - done : (off_t)sizeof zeros);
        ssize_t wrote = pwrite(descriptor, zeros, chunk, done);
        if (wrote < 0 && errno == EINTR) continue;
        if (wrote <= 0) rc = -1; else done += wrote;
    }
    if (rc == 0) rc = fsync(descriptor);
    close(descriptor);
    return unlink(path) == 0 || errno == ENOENT ? rc : -1;
}

static char *suffixed(const char *path, const char *suffix) {
    size_t length = strlen(path) + strlen(suffix) + 1;
    char *result = malloc(length);
    if (result) snprintf(result, length, "%s%s", path, suffix);
    return result;
}

int ak_sealed_recover(const char *path) {
    char *sealing = suffixed(path, ".sealing"), *old = suffixed(path, ".plain-old");
    char *sealingJournal = suffixed(path, ".sealing-sjournal"), *sealingWAL = suffixed(path, ".sealing-swal");
    int rc = sealing && old && sealingJournal && sealingWAL ? 0 : -1, cleared = 0;
    struct stat status, oldStatus;
    if (rc == 0 && lstat(sealing, &status) == 0) {
        // A copy the kill interrupted (the rename removes the name): the store is still the
        // plain file. Sealed again from the start.
        if (unlink(sealing) != 0 || (unlink(sealingJournal) != 0 && errno != ENOENT) || (unlink(sealingWAL) != 0 && errno != ENOENT)) rc = -1;
        cleared = 1;
    }
    if (rc == 0 && lstat(old, &oldStatus) == 0) {
        if (lstat(path, &status) == 0 && status.st_dev == oldStatus.st_dev && status.st_ino == oldStatus.st_ino) {
            rc = unlink(old);   // killed between link and rename: the same (plain) file twice
        } else {
            rc = wipe(old);     // killed after the rename: the plain copy's bytes go now
        }
        cleared = 1;
    }
    // The directory is synced only when a name went (every sealed open calls this: an fsync of
    // the directory there would cost each open a disk flush for nothing).
    if (rc == 0 && cleared) rc = syncParent(path);
    free(sealing); free(old); free(sealingJournal); free(sealingWAL);
    return rc;
}

/// "name:count," for every table, in name order: what the verification compares.
static char *tableCounts(sqlite3 *db) {
    sqlite3_str *out = sqlite3_str_new(db);
    sqlite3_stmt *tables = NULL;
    int rc = sqlite3_prepare_v2(db, "SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name", -1, &tables, NULL);
    while (rc == SQLITE_OK && sqlite3_step(tables) == SQLITE_ROW) {
        const char *name = (const char *)sqlite3_column_text(tables, 0);
        char *sql = sqlite3_mprintf("SELECT count(*) FROM \"%w\"", name);
        sqlite3_stmt *count = NULL;
        if (!sql || sqlite3_prepare_v2(db, sql, -1, &count, NULL) != SQLITE_OK || sqlite3_step(count) != SQLITE_ROW) rc = SQLITE_ERROR;
        else sqlite3_str_appendf(out, "%s:%lld,", name, sqlite3_column_int64(count, 0));
        sqlite3_finalize(count);
        sqlite3_free(sql);
    }
    sqlite3_finalize(tables);
    char *result = sqlite3_str_finish(out);
    if (rc != SQLITE_OK) {
        sqlite3_free(result);
        return NULL;
    }
    return result;
}

/// The first column of `sql`'s first row, compared with `expected`.
static int answers(sqlite3 *db, const char *sql, const char *expected) {
    sqlite3_stmt *statement = NULL;
    int ok = sqlite3_prepare_v2(db, sql, -1, &statement, NULL) == SQLITE_OK && sqlite3_step(statement) == SQLITE_ROW
        && sqlite3_column_text(statement, 0) && strcmp((const char *)sqlite3_column_text(statement, 0), expected) == 0;
    sqlite3_finalize(statement);
    return ok;
}

/// "file:<path, percent-encoded>?vfs=appkernel-sealed".
static char *sealedURI(const char *path) {
    sqlite3_str *out = sqlite3_str_new(NULL);
    sqlite3_str_appendall(out, "file:");
    for (const unsigned char *c = (const unsigned char *)path; *c; c++) {
        if ((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') || strchr("/-._~", *c)) sqlite3_str_appendchar(out, 1, (char)*c);
        else sqlite3_str_appendf(out, "%%%02X", *c);
    }
    sqlite3_str_appendall(out, "?vfs=" AK_SEALED_VFS_NAME);
    return sqlite3_str_finish(out);
}

int ak_sealed_migrate(const char *path, const unsigned char *key, int busyMilliseconds, char *message, size_t messageSize) {
    if (ak_sealed_register() != SQLITE_OK) return fail(message, messageSize, "the sealed VFS cannot be registered", NULL);
    if (ak_sealed_recover(path) != 0) return fail(message, messageSize, "cannot clear an earlier migration's leftovers", strerror(errno));
    char *sealing = suffixed(path, ".sealing"), *old = suffixed(path, ".plain-old"), *shm = suffixed(path, "-shm");
    char *uri = sealing ? sealedURI(sealing) : NULL, *plainCounts = NULL, *sealedCounts = NULL;
    sqlite3 *plain = NULL, *sealed = NULL;
    sqlite3_stmt *vacuum = NULL;
    int rc = -1, created = 0;
    if (!sealing || !old || !shm || !uri) { fail(message, messageSize, "out of memory", NULL); goto done; }
    // The plain store, held with an exclusive lock to the end: no other connection reads or
    // writes it while it is copied, nor after (its writes would miss the copy).
    if (sqlite3_open_v2(path, &plain, SQLITE_OPEN_READWRITE | SQLITE_OPEN_URI, NULL) != SQLITE_OK) {
        fail(message, messageSize, "cannot open the plain store", sqlite3_errmsg(plain)); goto done;
    }
    sqlite3_busy_timeout(plain, busyMilliseconds);
    if (sqlite3_exec(plain, "PRAGMA locking_mode = EXCLUSIVE", NULL, NULL, NULL) != SQLITE_OK
        || !answers(plain, "PRAGMA journal_mode = DELETE", "delete")
        || sqlite3_exec(plain, "BEGIN EXCLUSIVE; COMMIT", NULL, NULL, NULL) != SQLITE_OK) {
        fail(message, messageSize, "the plain store is in use (close it everywhere, then open it with the key)", sqlite3_errmsg(plain)); goto done;
    }
    int reserve = AK_SEALED_RESERVE;
    sqlite3_file_control(plain, "main", SQLITE_FCNTL_RESERVE_BYTES, &reserve);
    int descriptor = open(sealing, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (descriptor < 0) { fail(message, messageSize, "cannot create the sealed copy", strerror(errno)); goto done; }
    close(descriptor);
    created = 1;
    akPendingKey = key;
    int vacuumed = sqlite3_prepare_v2(plain, "VACUUM INTO ?1", -1, &vacuum, NULL) == SQLITE_OK
        && sqlite3_bind_text(vacuum, 1, uri, -1, SQLITE_TRANSIENT) == SQLITE_OK && sqlite3_step(vacuum) == SQLITE_DONE;
    akPendingKey = NULL;
    if (!vacuumed) { fail(message, messageSize, "cannot write the sealed copy", sqlite3_errmsg(plain)); goto done; }
    // Verified through the VFS as a store opens it: every page's tag, SQLite's integrity check,
    // the same tables with the same row counts; then in WAL mode, as stores are.
    if (ak_sealed_open(sealing, key, SQLITE_OPEN_READWRITE, busyMilliseconds, &sealed) != SQLITE_OK
        || !answers(sealed, "PRAGMA integrity_check", "ok")) {
        fail(message, messageSize, "the sealed copy does not verify", sealed ? sqlite3_errmsg(sealed) : NULL); goto done;
    }
    plainCounts = tableCounts(plain);
    sealedCounts = tableCounts(sealed);
    if (!plainCounts || !sealedCounts || strcmp(plainCounts, sealedCounts) != 0) {
        fail(message, messageSize, "the sealed copy's tables differ from the plain store's", NULL); goto done;
    }
    if (!answers(sealed, "PRAGMA journal_mode = WAL", "wal")) { fail(message, messageSize, "cannot set the sealed copy's WAL mode", sqlite3_errmsg(sealed)); goto done; }
    sqlite3_close_v2(sealed);
    sealed = NULL;
    if (syncPath(sealing, 0) != 0 || syncParent(path) != 0) { fail(message, messageSize, "cannot sync the sealed copy", strerror(errno)); goto done; }
    // The switch: a second name for the plain file (so a kill after the rename leaves it to
    // wipe), then the sealed copy renamed over the store, atomically.
    unlink(shm);
    if (link(path, old) != 0 || rename(sealing, path) != 0 || syncParent(path) != 0) {
        fail(message, messageSize, "cannot put the sealed copy in place", strerror(errno)); goto done;
    }
    created = 0;
    rc = 0;
done:
    sqlite3_finalize(vacuum);
    sqlite3_close_v2(sealed);
    sqlite3_close_v2(plain);
    if (rc == 0 && ak_sealed_recover(path) != 0) rc = fail(message, messageSize, "sealed, but the plain copy cannot be wiped", strerror(errno));
    if (rc != 0 && created) ak_sealed_recover(path);
    sqlite3_free(plainCounts); sqlite3_free(sealedCounts); sqlite3_free(uri);
    free(sealing); free(old); free(shm);
    return rc;
}
