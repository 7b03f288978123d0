// ``ConfigError``, which this module's config readers, store registry and manager throw, lives in
// the bottom module with the reader it comes from; importing AppKernelSDK is enough to name it,
// as it was before it moved there.
@_exported import AppKernelCore
