// The bottom module's values (``JSONValue``, the strict config reader, the one listener token)
// are part of the kernel's API: importing AppKernel is enough to use them.
@_exported import AppKernelCore
