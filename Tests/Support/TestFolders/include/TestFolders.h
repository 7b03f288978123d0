#ifndef APPKERNEL_TEST_FOLDERS_H
#define APPKERNEL_TEST_FOLDERS_H

/// The folder a test process's XDG folders were pointed into before `main` (removed at exit), or
/// NULL when it was not made (a child of a test process keeps its parent's).
const char *appkernel_test_folders(void);

#endif
