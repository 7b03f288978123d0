// `ConfigError`, which this module's config readers, store registry and manager throw, lives in
// the bottom module with the reader it comes from; importing AppKernelSDK is enough to name it,
// as it was before it moved there.
@_exported import AppKernelCore
// The config files' types (`SoupSpec`, `SyncSpec`, …) and SmartStore live in AppKernelStore,
// MobileSync in AppKernelSync; the SDK manager sets both up, and importing AppKernelSDK names them.
@_exported import AppKernelStore
@_exported import AppKernelSync
