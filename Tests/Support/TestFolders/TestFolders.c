// Before `main` runs, a test process points the XDG base directories into a private temporary
// folder, so nothing it or its children do lands in the user's folders: Foundation's URLSession
// makes `$XDG_CACHE_HOME/org.swift.foundation.URLCache/<executable>` and
// `$XDG_DATA_HOME/<executable's folder>` whatever its configuration says (an ephemeral one
// copies the default first), and a data home or key file left at its default would go to
// `~/.local/share` or `~/.config`. Done in a constructor because setenv() while other threads read
// the environment is a data race, and before `main` there are no other threads. The folder is
// removed at exit by the process that made it; children inherit the variables (and the marker
// `APPKERNEL_TEST_FOLDERS`, so their own constructor leaves what their parent set alone).
#define _XOPEN_SOURCE 700
#include "TestFolders.h"
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char root[4096];
static pid_t maker;

static int remove_entry(const char *path, const struct stat *status, int flag, struct FTW *walk) {
    (void)status; (void)flag; (void)walk;
    remove(path);
    return 0;
}

static void remove_root(void) {
    if (root[0] != '\0' && getpid() == maker) nftw(root, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static int make_folder(const char *name, const char *variable) {
    char path[4096];
    if (snprintf(path, sizeof path, "%s/%s", root, name) >= (int)sizeof path) return -1;
    if (mkdir(path, 0700) != 0) return -1;
    return setenv(variable, path, 1);
}

__attribute__((constructor)) static void appkernel_point_test_folders(void) {
    if (getenv("APPKERNEL_TEST_FOLDERS") != NULL) return;
    const char *temporary = getenv("TMPDIR");
    if (temporary == NULL || temporary[0] != '/') temporary = "/tmp";
    if (snprintf(root, sizeof root, "%s/appkernel-test-folders-XXXXXX", temporary) >= (int)sizeof root || mkdtemp(root) == NULL) {
        root[0] = '\0';
        return;   // the tests run with the user's folders; TestFoldersTests fails and says so
    }
    maker = getpid();
    atexit(remove_root);
    if (make_folder("cache", "XDG_CACHE_HOME") != 0 || make_folder("data", "XDG_DATA_HOME") != 0
        || make_folder("config", "XDG_CONFIG_HOME") != 0) return;
    setenv("APPKERNEL_TEST_FOLDERS", root, 1);
}

const char *appkernel_test_folders(void) {
    return root[0] != '\0' && getpid() == maker ? root : NULL;
}
