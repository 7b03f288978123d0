// Why this module re-exports three others — each is part of what an app sees of the SDK, the
// way a Mobile SDK app reaches SmartStore and MobileSync through its SDK manager:
// - AppKernelCore: `ConfigError`, which the config readers, the store registry and the manager
//   throw; `JSONValue`, the entries and records; `UserAccountIdentity`, which names a user's
//   stores (`StoreOwner.user`) and user changes.
// - AppKernelStore: `SDKManager.userStore()` returns a `SmartStore`; `stores` and
//   `currentStoreOwner` speak in `SoupSpec` and `StoreOwner`.
// - AppKernelSync: `SDKManager.syncManager()` returns a `SyncManager`; `stores` holds `SyncSpec`s
//   read by `SyncConfig` from `usersyncs.json`.
// AppKernelAuth is not re-exported: an app that handles accounts itself (`UserAccount`, login
// methods) imports it, as the examples do.
@_exported import AppKernelCore
@_exported import AppKernelStore
@_exported import AppKernelSync
