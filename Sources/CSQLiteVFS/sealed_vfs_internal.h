// Internal to the sealed VFS: the thread-local key hand-off between ak_sealed_open (and
// ak_sealed_exec_with_key) and the VFS's xOpen.
#ifndef APPKERNEL_SEALED_VFS_INTERNAL_H
#define APPKERNEL_SEALED_VFS_INTERNAL_H

/// The key the next main-database xOpen on this thread takes; NULL outside a sealed open.
extern _Thread_local const unsigned char *akPendingKey;

#endif
