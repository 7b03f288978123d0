// The system's SQLite (libsqlite3; its header comes with libsqlite3-dev on Debian and Ubuntu,
// with the SDK on macOS). A system library, not a package: AppKernel keeps no dependencies.
#include <sqlite3.h>
